package cgroupfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseTreeMounts(t *testing.T) {
	f := func(name, text string, wantV1 []string, wantCgroup2 string) treeMounts {
		t.Helper()
		m := treeMountsOf(parseMounts([]byte(text)))
		var got []string
		for _, tm := range m.v1 {
			got = append(got, tm.dir+"="+strings.Join(tm.options, ","))
		}
		if strings.Join(got, " ") != strings.Join(wantV1, " ") {
			t.Errorf("%s: v1\n got %q\nwant %q", name, got, wantV1)
		}
		if m.cgroup2 != wantCgroup2 {
			t.Errorf("%s: cgroup2 %q, want %q", name, m.cgroup2, wantCgroup2)
		}
		return m
	}
	data, err := os.ReadFile(filepath.Join("testdata", "mountinfo-hybrid"))
	if err != nil {
		t.Fatal(err)
	}
	// The memory hierarchy is mounted twice and the whole block repeats:
	// each hierarchy counts once.
	m := f("hybrid", string(data), []string{
		"/sys/fs/cgroup/cpu=cpu", "/sys/fs/cgroup/cpuacct=cpuacct", "/sys/fs/cgroup/cpuset=cpuset",
		"/sys/fs/cgroup/memory=memory", "/sys/fs/cgroup/devices=devices", "/sys/fs/cgroup/freezer=freezer",
		"/sys/fs/cgroup/blkio=blkio", "/sys/fs/cgroup/pids=pids", "/sys/fs/cgroup/systemd=name=systemd",
	}, "/sys/fs/cgroup/unified")
	be, err := newTreeV1(m.v1)
	if err != nil {
		t.Fatal(err)
	}
	if be.cpu != "/sys/fs/cgroup/cpu" || be.memory != "/sys/fs/cgroup/memory" || be.pids != "/sys/fs/cgroup/pids" || be.cpuset != "/sys/fs/cgroup/cpuset" {
		t.Errorf("controller mounts %+v", be)
	}

	m = f("combined cpu,cpuacct; bind of a sub-directory; escaped space",
		"30 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"+
			"31 25 0:28 / /sys/fs/cgroup/mem\\040ory rw - cgroup cgroup rw,memory,release_agent=/x\n"+
			"32 25 0:28 /some/pod /mnt/podmem rw - cgroup cgroup rw,memory\n",
		[]string{"/sys/fs/cgroup/cpu,cpuacct=cpu,cpuacct", "/sys/fs/cgroup/mem ory=memory"}, "")
	be, err = newTreeV1(m.v1)
	if err != nil {
		t.Fatal(err)
	}
	if be.cpu != "/sys/fs/cgroup/cpu,cpuacct" || be.memory != "/sys/fs/cgroup/mem ory" || be.pids != "" {
		t.Errorf("controller mounts %+v", be)
	}

	m = f("unified", "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n", nil, "/sys/fs/cgroup")
	if _, err := newTreeV1(m.v1); err == nil {
		t.Error("a v1 tree without cpu and memory hierarchies")
	}
	f("none", "22 27 0:21 / /proc rw - proc proc rw\nshort line\n", nil, "")
}

func TestReadCgroupInt(t *testing.T) {
	dir := t.TempDir()
	f := func(content string, want int64, wantErr bool) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "v"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readCgroupInt(dir, "v")
		if (err != nil) != wantErr || got != want {
			t.Errorf("%q: %d, %v; want %d (error %v)", content, got, err, want, wantErr)
		}
	}
	f("1024\n", 1024, false)
	f("max\n", -1, false)
	f("-1\n", -1, false)
	f("9223372036854771712\n", -1, false) // v1 memory.limit_in_bytes unlimited
	f("4611686018427387903\n", 4611686018427387903, false)
	f("garbage\n", 0, true)
	if _, err := readCgroupInt(dir, "missing"); err == nil {
		t.Error("missing file read")
	}
}
