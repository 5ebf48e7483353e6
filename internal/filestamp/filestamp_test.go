package filestamp

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStampChangesWithTheFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	write := func(p, s string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(a, "one")
	write(b, "two")
	s1, err := Of(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if s2, _ := Of(a, b); s2 != s1 {
		t.Fatal("the stamp changed with no change")
	}
	// Replaced by a rename, same size, same time: a new inode.
	tmp := filepath.Join(dir, "tmp")
	write(tmp, "TWO")
	st, _ := os.Stat(b)
	os.Chtimes(tmp, st.ModTime(), st.ModTime())
	if err := os.Rename(tmp, b); err != nil {
		t.Fatal(err)
	}
	s3, _ := Of(a, b)
	if s3 == s1 {
		t.Fatal("a file replaced by a rename kept its stamp")
	}
	// Written in place.
	write(a, "longer")
	os.Chtimes(a, time.Now().Add(time.Second), time.Now().Add(time.Second))
	if s4, _ := Of(a, b); s4 == s3 {
		t.Fatal("a file written in place kept its stamp")
	}
	if _, err := Of(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing file has a stamp")
	}
}
