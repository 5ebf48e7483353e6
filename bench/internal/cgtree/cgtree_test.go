package cgtree

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRemoveUnder(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	for _, d := range []string{"a/b/c", "a/d", "e"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := removeUnder(root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("root still there: %v", err)
	}
	if err := removeUnder(filepath.Join(dir, "missing")); err != nil {
		t.Fatalf("a missing tree: %v", err)
	}
	// A regular file stands in for a cgroup's process: the directory
	// holding it is not removed, and the error names it.
	keep := filepath.Join(dir, "busy", "child")
	os.MkdirAll(keep, 0o755)
	os.WriteFile(filepath.Join(keep, "pid"), []byte("1"), 0o644)
	// rmdir of a directory that is not empty is ENOTEMPTY, not retried.
	if err := removeUnder(filepath.Join(dir, "busy")); err == nil {
		t.Fatal("removed a directory that is not empty")
	}
}

func TestRemoveRefusesRoot(t *testing.T) {
	if err := Remove("/"); err == nil {
		t.Fatal("Remove(/) returned no error")
	}
}

func TestRemoveRealHierarchies(t *testing.T) {
	ms, err := hierarchies()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || os.Geteuid() != 0 {
		t.Skip("needs root and a mounted cgroup hierarchy")
	}
	const root = "/podline-cgtree-test"
	if err := Create(root); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if _, err := os.Stat(filepath.Join(m, root)); err != nil {
			t.Fatalf("Create: %v", err)
		}
		if cpus, err := os.ReadFile(filepath.Join(m, root, "cpuset.cpus")); err == nil && len(cpus) < 2 {
			t.Errorf("%s%s: empty cpuset.cpus after Create", m, root)
		}
		if err := os.MkdirAll(filepath.Join(m, root, "pod1", "ctr"), 0o755); err != nil {
			t.Fatalf("mkdir in %s: %v", m, err)
		}
	}
	if err := Remove(root); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if _, err := os.Stat(filepath.Join(m, root)); !os.IsNotExist(err) {
			t.Errorf("%s%s left: %v", m, root, err)
		}
	}
}
