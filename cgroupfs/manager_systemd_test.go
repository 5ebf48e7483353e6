package cgroupfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/containerd/cgroups/v3"
	"github.com/godbus/dbus/v5"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ops keeps the operation and unit of each call.
func ops(calls []string) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		f := strings.Fields(c)
		out[i] = strings.Join(f[:min(2, len(f))], " ")
	}
	return out
}

func expectOps(t *testing.T, sd *fakeSystemd, want ...string) []string {
	t.Helper()
	calls := sd.Calls()
	if got := ops(calls); !slices.Equal(got, want) {
		t.Errorf("calls:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	return calls
}

// The whole life of the tree on systemd: the root's slice, the QoS
// slices with their limits on the units and in the files, a pod slice
// with exact limits in the files (systemd's quota rounded up beside
// them), read back from the files, and removed by stopping the slice.
// One connection throughout.
func TestSystemdTree(t *testing.T) {
	tree, sd, mount := newSystemdTree(t, "/podline-e2e")
	if err := tree.EnsureQOS(2000, 4<<30); err != nil {
		t.Fatal(err)
	}
	const (
		root       = "podline_e2e.slice"
		kubepods   = "podline_e2e-kubepods.slice"
		burstable  = "podline_e2e-kubepods-burstable.slice"
		besteffort = "podline_e2e-kubepods-besteffort.slice"
	)
	calls := expectOps(t, sd,
		"start "+root, "start "+kubepods, "set "+kubepods,
		"start "+burstable, "set "+burstable, "start "+besteffort, "set "+besteffort)
	wantStart := "start " + kubepods + ` Description="Kubernetes pods (podline)" Wants=` + root +
		" DefaultDependencies=false MemoryAccounting=true CPUAccounting=true IOAccounting=true TasksAccounting=true"
	if calls[1] != wantStart {
		t.Errorf("start call:\n  %s\nwant\n  %s", calls[1], wantStart)
	}
	if !strings.Contains(calls[0], "Wants=-.slice") {
		t.Errorf("the root slice wants the root: %s", calls[0])
	}
	if want := "set " + kubepods + " CPUWeight=79 MemoryMax=4294967296"; calls[2] != want {
		t.Errorf("set call %q, want %q", calls[2], want)
	}
	kp := filepath.Join(mount, "podline_e2e.slice", kubepods)
	expectFile(t, kp, "cpu.weight", "79")
	expectFile(t, kp, "memory.max", "4294967296")
	// kubepods is podline's: it passes on what systemd enabled for it.
	expectFile(t, kp, "cgroup.subtree_control", "+cpu +io +memory +pids")
	// The root level is not written, as on the cgroupfs driver.
	expectFile(t, filepath.Join(mount, root), "cgroup.subtree_control", "cpu io memory pids")
	if fileExists(filepath.Join(mount, root, "cpu.weight")) {
		t.Error("the cgroup root's level got limits")
	}

	parent := tree.layout.PodParent("0b5c-77", v1.PodQOSBurstable)
	pod := "podline_e2e-kubepods-burstable-pod0b5c_77.slice"
	if filepath.Base(parent) != pod {
		t.Fatalf("PodParent = %s", parent)
	}
	shares, quota, period, mem, pids := uint64(256), int64(33300), CFSPeriodUS, int64(128<<20), int64(1024)
	r := Resources{CPUShares: &shares, CPUQuota: &quota, CPUPeriod: &period, MemoryLimit: &mem, PidsLimit: &pids}
	if err := tree.EnsurePod(parent, r); err != nil {
		t.Fatal(err)
	}
	calls = expectOps(t, sd, "start "+pod, "set "+pod)
	if !strings.Contains(calls[0], `Description="Kubernetes pod 0b5c_77 (podline)" Wants=`+burstable) {
		t.Errorf("pod slice start: %s", calls[0])
	}
	// 333m: systemd keeps 34 % (340 ms per second); the file keeps 33.3 %.
	if want := "set " + pod + " CPUWeight=10 CPUQuotaPeriodUSec=100000 CPUQuotaPerSecUSec=340000 MemoryMax=134217728 TasksMax=1024"; calls[1] != want {
		t.Errorf("set call\n  %s\nwant\n  %s", calls[1], want)
	}
	dir := filepath.Join(mount, parent)
	expectFile(t, dir, "cpu.max", "33300 100000")
	expectFile(t, dir, "cpu.weight", "10")
	expectFile(t, dir, "memory.max", "134217728")
	expectFile(t, dir, "pids.max", "1024")
	got, err := tree.PodLimits(parent)
	if err != nil {
		t.Fatal(err)
	}
	if *got.CPUQuota != quota || *got.CPUPeriod != period || *got.MemoryLimit != mem || *got.PidsLimit != pids || SharesToWeight(*got.CPUShares) != 10 {
		t.Errorf("PodLimits = %s", got)
	}
	if err := tree.SetBurstableCPU(100000); err != nil {
		t.Fatal(err)
	}
	if calls := expectOps(t, sd, "set "+burstable); len(calls) == 1 && !strings.HasSuffix(calls[0], "CPUWeight=3906") {
		t.Errorf("burstable shares: %s", calls[0])
	}

	os.WriteFile(filepath.Join(dir, "cgroup.events"), []byte("populated 0\nfrozen 0\n"), 0o644)
	if err := tree.RemovePod(parent); err != nil {
		t.Fatal(err)
	}
	expectOps(t, sd, "stop "+pod, "reset "+pod)
	if fileExists(dir) {
		t.Error("pod cgroup left")
	}
	// Again: the unit is gone, which is what was asked.
	if err := tree.RemovePod(parent); err != nil {
		t.Errorf("removing again: %v", err)
	}
	expectOps(t, sd, "stop "+pod)
	if n := sd.Dials(); n != 1 {
		t.Errorf("%d connections to systemd, want 1", n)
	}
}

// Units made before (by an earlier run of podline) are started as they
// are: a no-op for an active one.
func TestSystemdExistingUnits(t *testing.T) {
	tree, sd, _ := newSystemdTree(t, "/")
	if err := tree.EnsureQOS(1000, 0); err != nil {
		t.Fatal(err)
	}
	expectOps(t, sd, "start kubepods.slice", "set kubepods.slice", "start kubepods-burstable.slice", "set kubepods-burstable.slice",
		"start kubepods-besteffort.slice", "set kubepods-besteffort.slice")
	if err := tree.EnsureQOS(1000, 0); err != nil {
		t.Fatal(err)
	}
	expectOps(t, sd,
		"start kubepods.slice", "start-existing kubepods.slice", "set kubepods.slice",
		"start kubepods-burstable.slice", "start-existing kubepods-burstable.slice", "set kubepods-burstable.slice",
		"start kubepods-besteffort.slice", "start-existing kubepods-besteffort.slice", "set kubepods-besteffort.slice")
}

// A start job that does not finish "done" is an error naming the unit
// and the result, and the failed unit is reset for the next attempt.
func TestSystemdStartJobFails(t *testing.T) {
	tree, sd, _ := newSystemdTree(t, "/")
	if err := tree.EnsureQOS(1000, 0); err != nil {
		t.Fatal(err)
	}
	sd.Calls()
	parent := tree.layout.PodParent("u1", v1.PodQOSBestEffort)
	pod := "kubepods-besteffort-podu1.slice"
	sd.results[pod] = []string{"failed"}
	err := tree.EnsurePod(parent, Resources{})
	if err == nil || !strings.Contains(err.Error(), "start slice "+pod+": job failed") {
		t.Fatalf("EnsurePod: %v, want the failed job named", err)
	}
	expectOps(t, sd, "start "+pod, "reset "+pod)
	// A refusal by systemd is passed on as it is, not retried.
	sd.fail["set"] = []error{dbus.Error{Name: "org.freedesktop.DBus.Error.InvalidArgs"}}
	shares := uint64(2)
	if err := tree.EnsurePod(parent, Resources{CPUShares: &shares}); err == nil || !strings.Contains(err.Error(), "set properties of "+pod) {
		t.Errorf("EnsurePod: %v, want the refused properties", err)
	}
	expectOps(t, sd, "start "+pod, "start-existing "+pod, "set "+pod)
	if n := sd.Dials(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// The connection is opened again when it broke: between calls (systemd
// re-executed), during a call (the call is made again on the new one),
// and while waiting for a job (the start is made again, and finds the
// unit the first one made). Broken twice in a row, the call fails.
func TestSystemdReconnects(t *testing.T) {
	tree, sd, _ := newSystemdTree(t, "/")
	if err := tree.EnsureQOS(1000, 0); err != nil {
		t.Fatal(err)
	}
	sd.Calls()
	ensure := func(uid string) error {
		return tree.EnsurePod(tree.layout.PodParent(types.UID(uid), v1.PodQOSGuaranteed), Resources{})
	}

	sd.breakConn()
	if err := ensure("a"); err != nil {
		t.Fatal(err)
	}
	expectOps(t, sd, "start kubepods-poda.slice")
	if n := sd.Dials(); n != 2 {
		t.Errorf("after a break between calls: %d connections, want 2", n)
	}

	sd.fail["start"] = []error{dbus.ErrClosed}
	if err := ensure("b"); err != nil {
		t.Fatal(err)
	}
	expectOps(t, sd, "start kubepods-podb.slice", "start kubepods-podb.slice")
	if n := sd.Dials(); n != 3 {
		t.Errorf("after a break during a call: %d connections, want 3", n)
	}

	sd.results["kubepods-podc.slice"] = []string{jobLost}
	if err := ensure("c"); err != nil {
		t.Fatal(err)
	}
	expectOps(t, sd, "start kubepods-podc.slice", "start kubepods-podc.slice", "start-existing kubepods-podc.slice")
	if n := sd.Dials(); n != 4 {
		t.Errorf("after a break during a job: %d connections, want 4", n)
	}

	sd.fail["start"] = []error{dbus.ErrClosed, dbus.ErrClosed}
	if err := ensure("d"); !errors.Is(err, dbus.ErrClosed) {
		t.Errorf("broken twice: %v, want dbus.ErrClosed", err)
	}
	if err := ensure("d"); err != nil {
		t.Errorf("the next call: %v", err)
	}
}

// A job whose result never comes ends with the operation's timeout; no
// systemd to connect to is an error that says so.
func TestSystemdTimeoutAndNoSystemd(t *testing.T) {
	tree, sd, _ := newSystemdTree(t, "/")
	tree.be.(*treeSystemd).timeout = 50 * time.Millisecond
	sd.results["kubepods.slice"] = []string{jobNever}
	err := tree.EnsureQOS(1000, 0)
	if err == nil || !strings.Contains(err.Error(), "start slice kubepods.slice: waiting for systemd: context deadline exceeded") {
		t.Errorf("EnsureQOS: %v, want the timeout", err)
	}

	tree, sd, _ = newSystemdTree(t, "/")
	sd.dialErr = errors.New("dial unix /run/systemd/private: connect: no such file or directory")
	err = tree.EnsureQOS(1000, 0)
	if err == nil || !strings.Contains(err.Error(), "connect to systemd: dial unix /run/systemd/private") {
		t.Errorf("EnsureQOS: %v, want the failed connection", err)
	}
}

// A pod slice that still holds processes is busy and is not stopped
// (stopping it would kill them); directories systemd left (a runtime's
// container cgroup, an already stopped unit) are removed.
func TestSystemdRemovePod(t *testing.T) {
	tree, sd, mount := newSystemdTree(t, "/")
	if err := tree.EnsureQOS(1000, 0); err != nil {
		t.Fatal(err)
	}
	parent := tree.layout.PodParent("u9", v1.PodQOSBurstable)
	if err := tree.EnsurePod(parent, Resources{}); err != nil {
		t.Fatal(err)
	}
	sd.Calls()
	dir := filepath.Join(mount, parent)
	os.WriteFile(filepath.Join(dir, "cgroup.events"), []byte("populated 1\nfrozen 0\n"), 0o644)
	if err := tree.RemovePod(parent); !errors.Is(err, ErrBusy) {
		t.Errorf("RemovePod of a populated pod: %v, want ErrBusy", err)
	}
	expectOps(t, sd)

	// Stopped, with an empty container cgroup left behind.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(dir, "cri-containerd-c0ffee.scope")
	if err := os.MkdirAll(leftover, 0o755); err != nil {
		t.Fatal(err)
	}
	sd.keepDirs = true
	if err := tree.RemovePod(parent); err != nil {
		t.Fatal(err)
	}
	expectOps(t, sd, "stop kubepods-burstable-podu9.slice", "reset kubepods-burstable-podu9.slice")
	if fileExists(dir) {
		t.Error("the pod's leftover directories stayed")
	}
	if !fileExists(filepath.Join(mount, "kubepods.slice", "kubepods-burstable.slice")) {
		t.Error("the QoS cgroup went too")
	}
}

// Only the tree's own pod slices are made, written, read or removed;
// anything else is refused before systemd is asked.
func TestSystemdRefusesOtherCgroups(t *testing.T) {
	tree, sd, _ := newSystemdTree(t, "/r")
	for _, p := range []string{
		"/r.slice/r-kubepods.slice",
		"/r.slice/r-kubepods.slice/r-kubepods-burstable.slice",
		"/kubepods.slice/kubepods-pod1.slice",               // another root
		"/r.slice/r-kubepods.slice/kubepods-pod1.slice",     // a name systemd places elsewhere
		"/r.slice/r-kubepods.slice/r-kubepods-pod.slice",    // no UID
		"/r.slice/r-kubepods.slice/r-kubepods-pod1-2.slice", // a level more
		"/r.slice/r-kubepods.slice/r-kubepods-pod1.scope",   // not a slice
		"/r.slice/r-kubepods.slice/r-kubepods-burstable-pod1.slice",
		"/r.slice/r-kubepods.slice/r-kubepods-besteffort.slice/r-kubepods-burstable-pod1.slice",
		"/r.slice/r-kubepods.slice/../r-kubepods.slice/r-kubepods-pod1.slice",
		"/r/kubepods/pod1", // the cgroupfs driver's
		"/system.slice/system-pod1.slice",
	} {
		if err := tree.EnsurePod(p, Resources{}); !errors.Is(err, ErrNotPodCgroup) {
			t.Errorf("EnsurePod(%q) = %v, want ErrNotPodCgroup", p, err)
		}
		if _, err := tree.PodLimits(p); !errors.Is(err, ErrNotPodCgroup) {
			t.Errorf("PodLimits(%q) = %v, want ErrNotPodCgroup", p, err)
		}
		if err := tree.RemovePod(p); !errors.Is(err, ErrNotPodCgroup) {
			t.Errorf("RemovePod(%q) = %v, want ErrNotPodCgroup", p, err)
		}
	}
	expectOps(t, sd)
	for _, q := range []v1.PodQOSClass{v1.PodQOSGuaranteed, v1.PodQOSBurstable, v1.PodQOSBestEffort} {
		if p := tree.layout.PodParent("x_y-z", q); tree.checkPod(p) != nil {
			t.Errorf("checkPod(%q) refused the layout's own pod cgroup", p)
		}
	}
}

// Pods start in parallel on one connection.
func TestSystemdParallelPods(t *testing.T) {
	tree, sd, _ := newSystemdTree(t, "/")
	if err := tree.EnsureQOS(1000, 0); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 64 {
		wg.Go(func() {
			shares := uint64(2 + i)
			errs <- tree.EnsurePod(tree.layout.PodParent(types.UID(fmt.Sprint("p", i)), v1.PodQOSBurstable), Resources{CPUShares: &shares})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if n := len(sd.Calls()); n != 6+2*64 {
		t.Errorf("%d calls, want %d", n, 6+2*64)
	}
	if n := sd.Dials(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestCheckDriverMode(t *testing.T) {
	f := func(d Driver, mode cgroups.CGMode, wantErr string) {
		t.Helper()
		err := checkDriverMode(d, mode)
		if wantErr == "" && err != nil || wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr) || !errors.Is(err, errSystemdNeedsUnified)) {
			t.Errorf("checkDriverMode(%q, %v) = %v, want %q", d, mode, err, wantErr)
		}
	}
	f(DriverCgroupfs, cgroups.Hybrid, "")
	f(DriverCgroupfs, cgroups.Legacy, "")
	f("", cgroups.Hybrid, "")
	f(DriverSystemd, cgroups.Unified, "")
	f(DriverSystemd, cgroups.Hybrid, "this host runs cgroup v1 with a hybrid cgroup2 mount")
	f(DriverSystemd, cgroups.Legacy, "the systemd cgroup driver needs the unified cgroup hierarchy (cgroup v2); this host runs cgroup v1:")
	f(DriverSystemd, cgroups.Unavailable, "no cgroup filesystem")
}

// On this project's hybrid machines the systemd driver is refused at
// start, before anything is made.
func TestNewTreeRefusesSystemdOnV1(t *testing.T) {
	if cgroups.Mode() == cgroups.Unified {
		t.Skip("unified host: the systemd driver is allowed here")
	}
	for _, perQOS := range []bool{true, false} {
		_, err := NewTree(Layout{Root: "/podline-never-made", PerQOS: perQOS, Driver: DriverSystemd}, testLogger(t))
		if !errors.Is(err, errSystemdNeedsUnified) {
			t.Errorf("NewTree(systemd, per-QoS %v) = %v, want the refusal", perQOS, err)
		}
	}
	if _, err := NewTree(Layout{Root: "/podline e2e", PerQOS: true, Driver: DriverSystemd}, testLogger(t)); err == nil ||
		!strings.Contains(err.Error(), "systemd unit name") {
		t.Errorf("NewTree with a root no unit can be named after: %v", err)
	}
}
