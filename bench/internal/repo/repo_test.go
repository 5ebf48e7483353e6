package repo

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFindFromSkipsTheBenchModule(t *testing.T) {
	root := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "go.mod"), "module github.com/podline/podline\n\ngo 1.26.0\n")
	write(filepath.Join(root, "bench", "go.mod"), "module github.com/podline/podline/bench\n\ngo 1.26.0\n")
	suite := filepath.Join(root, "bench", "suite")
	if err := os.MkdirAll(suite, 0o755); err != nil {
		t.Fatal(err)
	}
	f := func(from string) {
		t.Helper()
		got, err := FindFrom(from)
		if err != nil {
			t.Fatalf("FindFrom(%s): %v", from, err)
		}
		if got != root {
			t.Fatalf("FindFrom(%s) = %s, want %s", from, got, root)
		}
	}
	f(root)
	f(filepath.Join(root, "bench"))
	f(suite)
}

func TestFindFromOutsideARepository(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := FindFrom(dir); err == nil && got == dir {
		t.Fatalf("FindFrom found %s, whose go.mod is another module's", got)
	}
}
