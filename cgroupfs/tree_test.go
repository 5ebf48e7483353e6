package cgroupfs

import (
	"errors"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/containerd/cgroups/v3"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// kernelTree is a Tree on the host's real cgroup v1 hierarchies, under a
// cgroup root of the test's own.
type kernelTree struct {
	*Tree
	layout Layout
	v1     []treeMount
	all    Hierarchies // every cgroup mount, the hybrid cgroup2 one too
}

// newKernelTree makes a Tree rooted at /podline-tree-test-<random>. At
// cleanup it removes that root (deepest first, in every hierarchy) and
// checks that nothing else appeared at the top of any hierarchy.
func newKernelTree(t testing.TB) kernelTree {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("cgroup tree tests need root")
	}
	if cgroups.Mode() == cgroups.Unified {
		t.Skip("unified host: the v1 tree tests do not apply (TestTreeV2 covers v2)")
	}
	mounts, err := readTreeMounts()
	if err != nil {
		t.Fatal(err)
	}
	all, err := FindHierarchies()
	if err != nil {
		t.Fatal(err)
	}
	name := "podline-tree-test-" + strconv.FormatUint(rand.Uint64(), 36)
	kt := kernelTree{layout: Layout{Root: "/" + name, PerQOS: true}, v1: mounts.v1, all: all}
	before := topLevel(t, all)
	t.Cleanup(func() {
		for _, mnt := range all {
			if err := removeTree(filepath.Join(mnt, name)); err != nil {
				t.Errorf("remove test root: %v", err)
			}
		}
		if added, removed := diffTopLevel(before, topLevel(t, all), ""); len(added)+len(removed) > 0 {
			t.Errorf("top-level cgroups changed: added %q, removed %q", added, removed)
		}
	})
	t.Cleanup(func() {
		// While the test root still exists: it is the only addition.
		if added, _ := diffTopLevel(before, topLevel(t, all), name); len(added) > 0 {
			t.Errorf("cgroups made outside the test root: %q", added)
		}
	})
	log := slog.New(slog.DiscardHandler)
	if tt, ok := t.(*testing.T); ok {
		log = testLogger(tt)
	}
	kt.Tree, err = NewTree(kt.layout, log)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := kt.be.(*treeV1); !ok {
		t.Fatalf("hybrid host got backend %s", kt.be)
	}
	return kt
}

// topLevel lists the directories at the top of each hierarchy.
func topLevel(t testing.TB, all Hierarchies) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, mnt := range all {
		ents, err := os.ReadDir(mnt)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.IsDir() {
				out[mnt] = append(out[mnt], e.Name())
			}
		}
	}
	return out
}

// diffTopLevel compares two listings, ignoring allowed and the other
// podline-* cgroups that tests of other packages may make meanwhile.
func diffTopLevel(before, after map[string][]string, allowed string) (added, removed []string) {
	skip := func(name string) bool {
		return name == allowed || strings.HasPrefix(name, "podline-") && !strings.HasPrefix(name, "podline-tree-test-")
	}
	for mnt, names := range after {
		for _, n := range names {
			if !slices.Contains(before[mnt], n) && !skip(n) {
				added = append(added, filepath.Join(mnt, n))
			}
		}
	}
	for mnt, names := range before {
		for _, n := range names {
			if !slices.Contains(after[mnt], n) && !skip(n) {
				removed = append(removed, filepath.Join(mnt, n))
			}
		}
	}
	return added, removed
}

// expectDirs checks that rel exists in every v1 hierarchy and not in the
// cgroup2 mount of the hybrid host.
func (kt kernelTree) expectDirs(t *testing.T, rel string) {
	t.Helper()
	for _, m := range kt.v1 {
		if fi, err := os.Stat(filepath.Join(m.dir, rel)); err != nil || !fi.IsDir() {
			t.Errorf("%s missing in %s: %v", rel, m.dir, err)
		}
	}
	for _, mnt := range kt.all {
		if !slices.ContainsFunc(kt.v1, func(m treeMount) bool { return m.dir == mnt }) && pathExists(t, filepath.Join(mnt, rel)) {
			t.Errorf("%s made in the cgroup2 mount %s", rel, mnt)
		}
	}
}

func (kt kernelTree) v1File(t *testing.T, controller, rel, name string) string {
	t.Helper()
	be := kt.be.(*treeV1)
	mnt := map[string]string{"cpu": be.cpu, "memory": be.memory, "pids": be.pids, "cpuset": be.cpuset}[controller]
	s, err := readCgroupFile(filepath.Join(mnt, rel), name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (kt kernelTree) expectV1(t *testing.T, controller, rel, name, want string) {
	t.Helper()
	if got := kt.v1File(t, controller, rel, name); got != want {
		t.Errorf("%s %s/%s = %q, want %q", controller, rel, name, got, want)
	}
}

func TestTreeEnsureQOS(t *testing.T) {
	kt := newKernelTree(t)
	kubepods := kt.layout.Root + "/kubepods"
	burstable, besteffort := kubepods+"/burstable", kubepods+"/besteffort"
	check := func(burstableShares string) {
		t.Helper()
		for _, rel := range []string{kt.layout.Root, kubepods, burstable, besteffort} {
			kt.expectDirs(t, rel)
			kt.expectV1(t, "cpuset", rel, "cpuset.cpus", kt.v1File(t, "cpuset", "/", "cpuset.cpus"))
			kt.expectV1(t, "cpuset", rel, "cpuset.mems", kt.v1File(t, "cpuset", "/", "cpuset.mems"))
		}
		kt.expectV1(t, "cpu", kubepods, "cpu.shares", "1536")
		kt.expectV1(t, "memory", kubepods, "memory.limit_in_bytes", "1073741824")
		kt.expectV1(t, "cpu", besteffort, "cpu.shares", "2")
		kt.expectV1(t, "cpu", burstable, "cpu.shares", burstableShares)
		kt.expectV1(t, "cpu", burstable, "cpu.cfs_quota_us", "-1")
		kt.expectV1(t, "memory", burstable, "memory.limit_in_bytes", "9223372036854771712")
	}
	if err := kt.EnsureQOS(1500, 1<<30); err != nil {
		t.Fatal(err)
	}
	check("2")
	if err := kt.EnsureQOS(1500, 1<<30); err != nil {
		t.Fatalf("EnsureQOS again: %v", err)
	}
	check("2")
	if err := kt.SetBurstableCPU(2500); err != nil {
		t.Fatal(err)
	}
	check("2560")
	if err := kt.EnsureQOS(1500, 1<<30); err != nil {
		t.Fatal(err)
	}
	check("2560") // a repeated EnsureQOS keeps the Burstable pods' shares
	if err := kt.SetBurstableCPU(1); err != nil {
		t.Fatal(err)
	}
	check("2")
}

// samplePods are the pods the report's file values come from.
func samplePods() (burstable, guaranteed *v1.Pod) {
	burstable = qosPod(nil, []v1.ResourceRequirements{qosRes("250m", "64Mi", "500m", "128Mi")})
	burstable.UID = types.UID("b0000000-0000-4000-8000-000000000001")
	guaranteed = qosPod(nil, []v1.ResourceRequirements{qosRes("", "", "500m", "256Mi"), qosRes("", "", "500m", "256Mi")})
	guaranteed.UID = types.UID("90000000-0000-4000-8000-000000000002")
	return burstable, guaranteed
}

func TestTreeEnsurePod(t *testing.T) {
	kt := newKernelTree(t)
	bPod, gPod := samplePods()
	bParent := kt.layout.PodParent(bPod.UID, QOSClass(bPod))
	gParent := kt.layout.PodParent(gPod.UID, QOSClass(gPod))
	if err := kt.EnsurePod(bParent, PodResources(bPod)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("EnsurePod before EnsureQOS: %v, want fs.ErrNotExist", err)
	}
	if err := kt.EnsureQOS(2000, 2<<30); err != nil {
		t.Fatal(err)
	}

	type files struct{ shares, quota, period, memory string }
	check := func(parent string, want files) {
		t.Helper()
		kt.expectDirs(t, parent)
		kt.expectV1(t, "cpu", parent, "cpu.shares", want.shares)
		kt.expectV1(t, "cpu", parent, "cpu.cfs_quota_us", want.quota)
		kt.expectV1(t, "cpu", parent, "cpu.cfs_period_us", want.period)
		kt.expectV1(t, "memory", parent, "memory.limit_in_bytes", want.memory)
		kt.expectV1(t, "cpuset", parent, "cpuset.cpus", kt.v1File(t, "cpuset", "/", "cpuset.cpus"))
		kt.expectV1(t, "cpuset", parent, "cpuset.mems", kt.v1File(t, "cpuset", "/", "cpuset.mems"))
		// Children (the runtime's container cgroups) get cpus and mems
		// from the kernel, not from a write that checks every sibling.
		kt.expectV1(t, "cpuset", parent, "cgroup.clone_children", "1")
		t.Logf("%s: cpu.shares=%s cpu.cfs_quota_us=%s cpu.cfs_period_us=%s memory.limit_in_bytes=%s",
			parent, want.shares, want.quota, want.period, want.memory)
	}
	for range 2 { // the second round: idempotent
		if err := kt.EnsurePod(bParent, PodResources(bPod)); err != nil {
			t.Fatal(err)
		}
		if err := kt.EnsurePod(gParent, PodResources(gPod)); err != nil {
			t.Fatal(err)
		}
		check(bParent, files{"256", "50000", "100000", "134217728"})
		check(gParent, files{"1024", "100000", "100000", "536870912"})
	}
	got, err := kt.PodLimits(bParent)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != "shares=256 quota=50000/100000 memory=134217728 pids=-1" {
		t.Errorf("PodLimits = %s", got)
	}

	// New values update the existing cgroup: the memory limit goes down.
	shares, quota, mem, pids := uint64(512), int64(120000), int64(64<<20), int64(100)
	if err := kt.EnsurePod(bParent, Resources{CPUShares: &shares, CPUQuota: &quota, MemoryLimit: &mem, PidsLimit: &pids}); err != nil {
		t.Fatal(err)
	}
	check(bParent, files{"512", "120000", "100000", "67108864"})
	kt.expectV1(t, "pids", bParent, "pids.max", "100")

	// Negative limits lift them.
	off := int64(-1)
	if err := kt.EnsurePod(bParent, Resources{CPUQuota: &off, MemoryLimit: &off, PidsLimit: &off}); err != nil {
		t.Fatal(err)
	}
	check(bParent, files{"512", "-1", "100000", "9223372036854771712"})
	if got, err := kt.PodLimits(bParent); err != nil || got.String() != "shares=512 quota=-1/100000 memory=-1 pids=-1" {
		t.Errorf("PodLimits after lifting = %s, %v", got, err)
	}

	// BestEffort: the minimum shares, nothing else.
	ePod := qosPod(nil, []v1.ResourceRequirements{{}})
	ePod.UID = "e0000000"
	eParent := kt.layout.PodParent(ePod.UID, QOSClass(ePod))
	if err := kt.EnsurePod(eParent, PodResources(ePod)); err != nil {
		t.Fatal(err)
	}
	check(eParent, files{"2", "-1", "100000", "9223372036854771712"})

	// The kernel's refusal comes back as an error: quota below 1 ms.
	tiny := int64(10)
	if err := kt.EnsurePod(gParent, Resources{CPUQuota: &tiny}); err == nil {
		t.Error("a 10 µs quota was accepted")
	}

	h, err := FindHierarchies()
	if err != nil {
		t.Fatal(err)
	}
	for _, parent := range []string{bParent, gParent, eParent} {
		if err := h.RemovePod(parent); err != nil {
			t.Fatal(err)
		}
		for _, mnt := range h {
			if pathExists(t, filepath.Join(mnt, parent)) {
				t.Errorf("%s still in %s", parent, mnt)
			}
		}
	}
	kt.expectDirs(t, kt.layout.Root+"/kubepods/burstable")
}

func TestTreeRefusesOtherCgroups(t *testing.T) {
	kt := newKernelTree(t)
	if err := kt.EnsureQOS(1000, 0); err != nil {
		t.Fatal(err)
	}
	r := Resources{CPUShares: new(uint64)}
	*r.CPUShares = 100
	root := kt.layout.Root
	for _, parent := range []string{
		"", "relative/kubepods/podx", "/kubepods/burstable/podx", root + "/kubepods", root + "/kubepods/burstable",
		root + "/kubepods/other/podx", root + "/kubepods/burstable/pod", root + "/kubepods/burstable/podx/ctr",
		root + "/kubepods/burstable/podx/../../../x/podx", root + "/kubepods/burstable/podx/", root + "/system.slice/podx",
	} {
		if err := kt.EnsurePod(parent, r); !errors.Is(err, ErrNotPodCgroup) {
			t.Errorf("EnsurePod(%q) = %v, want ErrNotPodCgroup", parent, err)
		}
		if _, err := kt.PodLimits(parent); !errors.Is(err, ErrNotPodCgroup) {
			t.Errorf("PodLimits(%q) = %v, want ErrNotPodCgroup", parent, err)
		}
	}
	ents, err := os.ReadDir(filepath.Join(kt.be.(*treeV1).cpu, root, "kubepods", "burstable"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			t.Errorf("refused calls made %s", e.Name())
		}
	}
}

func TestTreePerQOSOff(t *testing.T) {
	kt := newKernelTree(t)
	off, err := NewTree(Layout{Root: kt.layout.Root}, testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := off.EnsureQOS(1000, 1<<30); err != nil {
		t.Error(err)
	}
	if err := off.SetBurstableCPU(100); err != nil {
		t.Error(err)
	}
	if err := off.EnsurePod("", PodResources(qosPod(nil, nil))); err != nil {
		t.Error(err)
	}
	if err := off.EnsurePod(kt.layout.Root+"/kubepods/podx", PodResources(qosPod(nil, nil))); err != nil {
		t.Error(err)
	}
	if r, err := off.PodLimits(""); err != nil || r.String() != "{}" {
		t.Errorf("PodLimits = %s, %v", r, err)
	}
	for _, mnt := range kt.all {
		if pathExists(t, filepath.Join(mnt, kt.layout.Root)) {
			t.Errorf("cgroups-per-qos off made %s in %s", kt.layout.Root, mnt)
		}
	}
}
