package kubelet

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeHost points the host paths at a temporary tree and turns iptables
// off, so that saveHostState and restore touch nothing real.
func fakeHost(t *testing.T) (root string) {
	t.Helper()
	root = t.TempDir()
	saved := []any{procSys, hostRecord, kubeletHostDirs, containerLogLinks, iptablesBins}
	t.Cleanup(func() {
		procSys = saved[0].(string)
		hostRecord = saved[1].(string)
		kubeletHostDirs = saved[2].([]string)
		containerLogLinks = saved[3].(string)
		iptablesBins = saved[4].([]string)
	})
	procSys = filepath.Join(root, "proc/sys")
	hostRecord = filepath.Join(root, "run/podline-bench/kubelet-host.json")
	kubeletHostDirs = []string{filepath.Join(root, "var/lib/kubelet"), filepath.Join(root, "var/lib/kubelet/device-plugins")}
	containerLogLinks = filepath.Join(root, "var/log/containers")
	iptablesBins = nil
	return root
}

func TestHostStateRestore(t *testing.T) {
	root := fakeHost(t)
	write := func(k, v string) {
		t.Helper()
		p := filepath.Join(procSys, k)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func(k string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(procSys, k))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	exists := func(p string) bool {
		_, err := os.Lstat(p)
		return err == nil
	}
	write("vm/overcommit_memory", "0")
	write("kernel/panic", "1")
	// kernel/keys/* missing: not saved, so not restored either.
	kubeletDir := filepath.Join(root, "kb")
	h, err := saveHostState(kubeletDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Sysctls) != 2 || !exists(hostRecord) {
		t.Fatalf("saved %v (record there: %v), want the 2 tunables that exist, recorded", h.Sysctls, exists(hostRecord))
	}

	// What the kubelet does at start.
	write("vm/overcommit_memory", "1")
	write("kernel/panic", "10")
	for _, d := range append(kubeletHostDirs, containerLogLinks) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(kubeletDir+"/pod-logs/ns_p_uid/c/0.log", filepath.Join(containerLogLinks, "p.log")); err != nil {
		t.Fatal(err)
	}

	// A second kubelet starting now (or after the first was killed) must
	// take the recorded originals, not the kubelet's values.
	h2, err := saveHostState(kubeletDir)
	if err != nil {
		t.Fatal(err)
	}
	if h2.Sysctls["kernel/panic"] != "1" {
		t.Errorf("second save took kernel/panic=%s, want the recorded 1", h2.Sysctls["kernel/panic"])
	}

	if err := h2.restore(); err != nil {
		t.Fatal(err)
	}
	if got := read("vm/overcommit_memory"); got != "0" {
		t.Errorf("vm/overcommit_memory = %s, want 0 restored", got)
	}
	if got := read("kernel/panic"); got != "1" {
		t.Errorf("kernel/panic = %s, want 1 restored", got)
	}
	if exists(filepath.Join(procSys, "kernel/keys/root_maxkeys")) {
		t.Errorf("restore created a tunable that was never saved")
	}
	for _, d := range kubeletHostDirs {
		if exists(d) {
			t.Errorf("%s was made by the kubelet and is still there", d)
		}
	}
	// The links dir existed before (it is not in kubeletHostDirs here):
	// only the link into the kubelet's dir goes.
	if !exists(containerLogLinks) || exists(filepath.Join(containerLogLinks, "p.log")) {
		t.Errorf("links dir kept: %v, kubelet link kept: %v; want kept and gone",
			exists(containerLogLinks), exists(filepath.Join(containerLogLinks, "p.log")))
	}
	if exists(filepath.Dir(hostRecord)) {
		t.Errorf("record dir %s left after a complete restore", filepath.Dir(hostRecord))
	}
	// The first kubelet's Cleanup after the second's: nothing left to do.
	if err := h.restore(); err != nil {
		t.Errorf("second restore: %v", err)
	}
}

func TestHostRecordCorrupt(t *testing.T) {
	fakeHost(t)
	if err := os.MkdirAll(filepath.Dir(hostRecord), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hostRecord, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := saveHostState("/kb"); err == nil || !strings.Contains(err.Error(), hostRecord) {
		t.Errorf("corrupt record: err = %v, want one naming %s", err, hostRecord)
	}
}

func TestVersion(t *testing.T) {
	dir := t.TempDir()
	f := func(output string, want string, wantErr bool) {
		t.Helper()
		bin := filepath.Join(dir, "kubelet")
		script := "#!/bin/sh\necho '" + output + "'\n"
		if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		got, err := Version(bin)
		if (err != nil) != wantErr || got != want {
			t.Errorf("Version for %q = %q, %v; want %q, error %v", output, got, err, want, wantErr)
		}
	}
	f("Kubernetes v1.36.3", "v1.36.3", false)
	f("Kubernetes v0.0.0-master+$Format:%H$", "v0.0.0-master+$Format:%H$", false)
	f("kubelet version unknown", "", true)
	if _, err := Version(filepath.Join(dir, "missing")); err == nil {
		t.Error("Version of a missing binary: no error")
	}
}

func TestRemoveLinksInto(t *testing.T) {
	tmp := t.TempDir()
	links := filepath.Join(tmp, "containers")
	kubeletDir := filepath.Join(tmp, "kb")
	if err := os.MkdirAll(links, 0o755); err != nil {
		t.Fatal(err)
	}
	mk := func(name, dest string) {
		t.Helper()
		if err := os.Symlink(dest, filepath.Join(links, name)); err != nil {
			t.Fatal(err)
		}
	}
	mk("ours.log", kubeletDir+"/pod-logs/ns_p_uid/c/0.log")
	mk("sibling.log", kubeletDir+"2/pod-logs/ns_p_uid/c/0.log") // a prefix, not below
	mk("theirs.log", "/var/log/pods/ns_q_uid/c/0.log")
	if err := os.WriteFile(filepath.Join(links, "plain.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := removeLinksInto(links, kubeletDir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(links)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if want := []string{"plain.log", "sibling.log", "theirs.log"}; !slices.Equal(left, want) {
		t.Errorf("left %q, want %q", left, want)
	}
	if err := removeLinksInto(filepath.Join(tmp, "missing"), kubeletDir); err != nil {
		t.Errorf("missing links dir: %v", err)
	}
}
