package safepath

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// volume makes a base directory laid out as a container could leave an
// emptyDir, next to a "host" directory that must stay out of reach.
func volume(t *testing.T) (base, host string) {
	t.Helper()
	top := t.TempDir()
	base, host = filepath.Join(top, "vol"), filepath.Join(top, "host")
	for _, d := range []string{base, host, filepath.Join(base, "dir", "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(host, "secret"), "host data")
	write(t, filepath.Join(base, "dir", "file"), "volume data")
	links := map[string]string{
		"abs-root":   "/",
		"abs-host":   host,
		"climb":      "../host",
		"deep-climb": "dir/sub/../../../host",
		"inside":     "dir",
		"inside-rel": "dir/sub/..",
		"to-file":    "dir/file",
		"dangling":   "nowhere",
		"magic":      "/proc/self/root",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(base, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../../host", filepath.Join(base, "dir", "up")); err != nil {
		t.Fatal(err)
	}
	return base, host
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestOpenBeneath(t *testing.T) {
	base, _ := volume(t)
	f := func(rel string, want error) {
		t.Helper()
		file, err := OpenBeneath(base, rel)
		if file != nil {
			file.Close()
		}
		switch {
		case want == nil && err != nil:
			t.Errorf("OpenBeneath(%q) = %v, want success", rel, err)
		case want != nil && !errors.Is(err, want):
			t.Errorf("OpenBeneath(%q) = %v, want %v", rel, err, want)
		}
	}
	f("dir", nil)
	f("dir/file", nil)
	f("inside", nil)
	f("inside/file", nil)
	f("inside-rel/file", nil)
	f("to-file", nil)
	f("abs-root", ErrEscapes)
	f("abs-root/etc", ErrEscapes)
	f("abs-host/secret", ErrEscapes)
	f("climb/secret", ErrEscapes)
	f("deep-climb", ErrEscapes)
	f("dir/up/secret", ErrEscapes)
	f("inside/up", ErrEscapes)
	f("magic", ErrEscapes)
	f("..", ErrEscapes)
	f("dir/../../host", ErrEscapes)
	f("dangling", fs.ErrNotExist)
	f("missing", fs.ErrNotExist)

	if _, err := OpenBeneath(base, "/etc"); err == nil {
		t.Error("an absolute path was accepted")
	}
}

func TestMkdirAll(t *testing.T) {
	base, host := volume(t)
	if err := MkdirAll(base, "new/a/b", 0o777); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(base, "new", "a", "b"))
	if err != nil {
		t.Fatal(err)
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o777 {
		t.Errorf("made %v, want a directory with mode 0777 whatever the umask", fi.Mode())
	}
	if err := MkdirAll(base, "inside/made", 0o750); err != nil {
		t.Fatalf("through a link that stays inside: %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "dir", "made")); err != nil {
		t.Errorf("the directory did not land where the inside link points: %v", err)
	}
	if err := MkdirAll(base, "dir", 0o777); err != nil {
		t.Errorf("an existing directory: %v", err)
	}

	for _, rel := range []string{"abs-host/planted", "climb/planted", "dir/up/planted", "abs-root/tmp/planted", "../planted"} {
		if err := MkdirAll(base, rel, 0o777); !errors.Is(err, ErrEscapes) {
			t.Errorf("MkdirAll(%q) = %v, want ErrEscapes", rel, err)
		}
	}
	entries, _ := os.ReadDir(host)
	if len(entries) != 1 {
		t.Errorf("the host directory gained entries: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(base), "planted")); err == nil {
		t.Error("a directory was made beside the volume")
	}
}

func TestBindBeneath(t *testing.T) {
	base, _ := volume(t)
	targets := t.TempDir()
	t.Cleanup(func() { unmountAll(t, targets) })

	dirTarget := filepath.Join(targets, "vol", "app", "0")
	if err := BindBeneath(base, "inside", dirTarget); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dirTarget, "file")); err != nil || string(b) != "volume data" {
		t.Errorf("directory bind shows %q, %v", b, err)
	}
	fileTarget := filepath.Join(targets, "vol", "app", "1")
	if err := BindBeneath(base, "to-file", fileTarget); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(fileTarget); err != nil || string(b) != "volume data" {
		t.Errorf("file bind shows %q, %v", b, err)
	}

	// The bind pins what was checked: replacing the path with a link to
	// the host afterwards changes nothing the target shows.
	if err := os.Rename(filepath.Join(base, "dir"), filepath.Join(base, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(base, "dir")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dirTarget, "file")); err != nil || string(b) != "volume data" {
		t.Errorf("after the swap the bind shows %q, %v", b, err)
	}
	// Binding again (a restarted container) resolves anew and refuses.
	if err := BindBeneath(base, "inside", dirTarget); !errors.Is(err, ErrEscapes) {
		t.Errorf("rebinding through the swapped link = %v, want ErrEscapes", err)
	}

	for i, rel := range []string{"abs-root", "climb", "abs-host/secret", "magic"} {
		target := filepath.Join(targets, "escape", string(rune('a'+i)))
		if err := BindBeneath(base, rel, target); !errors.Is(err, ErrEscapes) {
			t.Errorf("BindBeneath(%q) = %v, want ErrEscapes", rel, err)
		}
		if isMount(t, target) {
			t.Errorf("%q: something was mounted on %s", rel, target)
		}
	}
}

func TestBindBeneathReplacesPreviousMount(t *testing.T) {
	base, _ := volume(t)
	targets := t.TempDir()
	t.Cleanup(func() { unmountAll(t, targets) })
	target := filepath.Join(targets, "0")
	if err := BindBeneath(base, "dir", target); err != nil {
		t.Fatal(err)
	}
	if err := BindBeneath(base, "dir/sub", target); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(target, "file")); err == nil {
		t.Error("the second bind did not replace the first")
	}
	if n := mountsAt(t, target); n != 1 {
		t.Errorf("%d mounts stacked on the target, want 1", n)
	}
}

func isMount(t *testing.T, path string) bool {
	return mountsAt(t, path) > 0
}

func mountsAt(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == path {
			n++
		}
	}
	return n
}

func unmountAll(t *testing.T, dir string) {
	for i := 0; i < 16; i++ {
		found := false
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && isMount(t, p) {
				unix.Unmount(p, unix.MNT_DETACH)
				found = true
			}
			return nil
		})
		if !found {
			return
		}
	}
}
