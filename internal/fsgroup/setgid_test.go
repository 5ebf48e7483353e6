package fsgroup

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestCheckSetgid(t *testing.T) {
	for _, c := range []struct {
		want, got fs.FileMode
		dropped   bool
	}{
		{fs.ModeSetgid | 0o770, fs.ModeSetgid | 0o770, false},
		{fs.ModeSetgid | 0o770, 0o770, true},
		{0o770, 0o770, false},
		{0o755, fs.ModeSetgid | 0o755, false},
	} {
		err := CheckSetgid("/v", c.want, c.got)
		if errors.Is(err, ErrSetgidDropped) != c.dropped {
			t.Errorf("CheckSetgid(%v, %v) = %v, want dropped %v", c.want, c.got, err, c.dropped)
		}
	}
}

// On a directory of a group podline is not in, as root: with CAP_FSETID
// (root's usual set) the bit stays, which CheckSetgid accepts.
func TestCheckSetgidOnADirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "v")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Lchown(dir, -1, 4242); err != nil {
			t.Fatal(err)
		}
	}
	want := fs.ModeSetgid | 0o770
	if err := os.Chmod(dir, want); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSetgid(dir, want, fi.Mode()); err != nil {
		t.Fatalf("with CAP_FSETID: %v", err)
	}
}

// Without CAP_FSETID, root's chmod to setgid on a directory of another
// group is silently cut by the kernel: the case CheckSetgid exists for.
func TestCheckSetgidSeesTheKernelDropIt(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to give the directory to another group")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) not installed")
	}
	dir := filepath.Join(t.TempDir(), "v")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(dir, -1, 4242); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(setpriv, "--bounding-set=-fsetid", "--inh-caps=-fsetid", "chmod", "2770", dir).CombinedOutput(); err != nil {
		t.Fatalf("chmod without CAP_FSETID: %v: %s", err, out)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckSetgid(dir, fs.ModeSetgid|0o770, fi.Mode()); !errors.Is(err, ErrSetgidDropped) {
		t.Fatalf("mode %v after a chmod without CAP_FSETID: CheckSetgid = %v, want ErrSetgidDropped", fi.Mode(), err)
	}
}
