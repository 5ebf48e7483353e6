package stages

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// Another pod that mounts a parent of a hostPath can plant links in it.
// A *OrCreate type must create only where the path says: never the
// target of a link to nothing, never through a link that is not a
// directory. Links to what exists are the host's layout and are taken as
// they are (the runtime follows them too when it mounts).
func TestCheckHostPathCreatesNothingThroughLinks(t *testing.T) {
	shared := t.TempDir() // what the other pod can write
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "file"), []byte("host data"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := func(name, target string) string {
		t.Helper()
		p := filepath.Join(shared, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	check := func(typ v1.HostPathType, path string) error {
		t.Helper()
		return checkHostPath(path, &typ)
	}
	outsideHolds := func(want ...string) {
		t.Helper()
		entries, err := os.ReadDir(outside)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("outside holds %v, want %v", got, want)
		}
	}
	refused := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "symlink to nothing") {
			t.Errorf("%s: %v, want a refusal naming the symlink to nothing", what, err)
		}
	}

	refused("FileOrCreate on a link to a missing file",
		check(v1.HostPathFileOrCreate, link("f", filepath.Join(outside, "made"))))
	refused("DirectoryOrCreate on a link to a missing directory",
		check(v1.HostPathDirectoryOrCreate, link("d", filepath.Join(outside, "madedir"))))
	refused("DirectoryOrCreate below a link to a missing directory",
		check(v1.HostPathDirectoryOrCreate, filepath.Join(link("p", filepath.Join(outside, "parent")), "sub")))
	refused("FileOrCreate below a link to a missing directory",
		check(v1.HostPathFileOrCreate, filepath.Join(shared, "p", "f")))
	outsideHolds("file")

	if err := check(v1.HostPathDirectoryOrCreate, filepath.Join(link("tofile", filepath.Join(outside, "file")), "sub")); err == nil ||
		!strings.Contains(err.Error(), "not a directory") {
		t.Errorf("DirectoryOrCreate below a link to a file: %v", err)
	}
	if err := check(v1.HostPathFileOrCreate, filepath.Join(shared, "tofile")); err != nil {
		t.Errorf("FileOrCreate on a link to an existing file: %v", err)
	}
	if err := check(v1.HostPathDirectory, filepath.Join(shared, "d")); err == nil {
		t.Error("Directory on a link to nothing passed")
	}
	outsideHolds("file")
	if b, err := os.ReadFile(filepath.Join(outside, "file")); err != nil || string(b) != "host data" {
		t.Errorf("the linked file: %q, %v", b, err)
	}

	// The host's own links: a path through a link to an existing
	// directory makes what is missing where the link leads.
	hostLink := link("run", outside)
	if err := check(v1.HostPathDirectoryOrCreate, filepath.Join(hostLink, "app", "data")); err != nil {
		t.Fatalf("DirectoryOrCreate through a link to a directory: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(outside, "app", "data")); err != nil || !fi.IsDir() {
		t.Errorf("made %v, %v; want a directory", fi, err)
	}
	if err := check(v1.HostPathFileOrCreate, filepath.Join(hostLink, "app", "sock")); err != nil {
		t.Fatalf("FileOrCreate through a link to a directory: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(outside, "app", "sock")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("made %v, %v; want a regular file", fi, err)
	}
}
