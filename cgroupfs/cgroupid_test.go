package cgroupfs

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"testing"

	"golang.org/x/sys/unix"
)

func TestCgroupID(t *testing.T) {
	n := newTestNotifier(t)
	cg := makeTestCgroup(t, n)
	id, err := CgroupID(cg.v2)
	if err != nil {
		t.Fatal(err)
	}
	// name_to_handle_at on cgroupfs returns the 64-bit kernfs node id, the
	// value bpf_get_current_cgroup_id() reports.
	h, _, err := nameToHandle(cg.v2)
	if err != nil {
		t.Fatal(err)
	}
	if id != h {
		t.Errorf("CgroupID = %d, file handle id = %d", id, h)
	}
	if _, err := CgroupID(cg.v2 + "-missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing cgroup: err %v, want fs.ErrNotExist", err)
	}
	if _, err := CgroupID(t.TempDir()); err == nil {
		t.Error("CgroupID of a non-cgroup directory succeeded")
	}
}

func nameToHandle(dir string) (uint64, int32, error) {
	h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, dir, 0)
	if err != nil {
		return 0, 0, err
	}
	b := h.Bytes()
	if len(b) != 8 {
		return 0, 0, errors.New("cgroup file handle is not 8 bytes")
	}
	return binary.NativeEndian.Uint64(b), h.Type(), nil
}
