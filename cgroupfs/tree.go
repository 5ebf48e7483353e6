package cgroupfs

import (
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"sync"

	"github.com/VictoriaMetrics/metrics"
	"github.com/containerd/cgroups/v3"
	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/internal/poduid"
)

// ErrNotPodCgroup is returned for a pod cgroup path that is not one
// Layout.PodParent of this tree's layout could have returned.
var ErrNotPodCgroup = errors.New("not a pod cgroup of this tree")

var (
	podCgroupEnsures      = metrics.NewCounter(`podline_cgroup_pod_ensures_total`)
	podCgroupEnsureErrors = metrics.NewCounter(`podline_cgroup_pod_ensure_errors_total`)
)

// treeBackend creates cgroup directories and writes limits on one kind of
// host. Directories are paths relative to the hierarchy roots
// ("/kubepods/burstable"), as in Layout.
type treeBackend interface {
	// ensureDir creates dir if it is missing; its parent must exist.
	// ours says dir is podline's even if it already existed (kubepods
	// and below). It reports whether podline owns dir: ours, or created
	// now. Only an owned directory is prepared for children and tasks
	// (v1 cpuset filled, v2 controllers enabled).
	ensureDir(dir string, ours bool) (owned bool, err error)
	// write writes the set fields of r into dir.
	write(dir string, r Resources) error
	// read reads back what write writes.
	read(dir string) (Resources, error)
	String() string
}

// podMaker is a backend with a cheaper way to make a new pod cgroup than
// ensureDir and write. handled false, with no error, leaves the work to
// them.
type podMaker interface {
	ensurePod(dir string, r Resources) (handled bool, err error)
}

// Tree keeps podline's cgroup tree as the kubelet does: <root>/kubepods
// limited to the node's allocatable cpu and memory, kubepods/burstable and
// kubepods/besteffort below it, and one cgroup per pod (Guaranteed pods
// directly under kubepods) carrying the pod's limits, named and made by
// the layout's driver (cgroupfs directories, or systemd slice units).
// Containers' cgroups, which the runtime makes inside the pod cgroup, are
// not the Tree's business.
//
// With Layout.PerQOS false every method does nothing. Methods are safe for
// concurrent use; EnsurePod of different pods runs in parallel.
type Tree struct {
	log    *slog.Logger
	be     treeBackend // nil: PerQOS is off
	hier   Hierarchies // where RemovePod removes directories
	layout Layout
	// The QoS cgroups: <root>/kubepods and the two below it.
	kubepods, burstable, besteffort string

	mu             sync.Mutex // orders QoS-level writes
	burstableMilli int64
	qosReady       bool
}

// NewTree picks the backend for the host and driver: with the cgroupfs
// driver cgroup v1 (a legacy or hybrid host, like this project's
// machines) or the unified cgroup2 hierarchy; with the systemd driver
// slice units on the unified hierarchy only, refused elsewhere. It
// connects to systemd at first use, not here.
func NewTree(layout Layout, log *slog.Logger) (*Tree, error) {
	if err := layout.Validate(); err != nil {
		return nil, fmt.Errorf("cgroup tree: %w", err)
	}
	mode := cgroups.Mode()
	if err := checkDriverMode(layout.Driver, mode); err != nil {
		return nil, fmt.Errorf("cgroup tree: %w", err)
	}
	if !layout.PerQOS {
		return newTree(layout, log, nil, nil), nil
	}
	all, err := readMounts()
	if err != nil {
		return nil, fmt.Errorf("cgroup tree: %w", err)
	}
	mounts := treeMountsOf(all)
	var be treeBackend
	switch {
	case layout.Driver.systemd():
		be, err = newTreeSystemd(mounts.cgroup2, newSystemdBus(dialSystemd), log)
	case mode == cgroups.Legacy, mode == cgroups.Hybrid:
		be, err = newTreeV1(mounts.v1)
	case mode == cgroups.Unified:
		be, err = newTreeV2(mounts.cgroup2)
	default:
		err = fmt.Errorf("no cgroup filesystem mounted (mode %v)", mode)
	}
	if err != nil {
		return nil, fmt.Errorf("cgroup tree: %w", err)
	}
	return newTree(layout, log, be, hierarchiesOf(all)), nil
}

// checkDriverMode refuses the systemd driver on a host without the
// unified hierarchy: podline makes systemd's slices on cgroup v2 only.
func checkDriverMode(d Driver, mode cgroups.CGMode) error {
	if !d.systemd() || mode == cgroups.Unified {
		return nil
	}
	what := map[cgroups.CGMode]string{cgroups.Legacy: "cgroup v1", cgroups.Hybrid: "cgroup v1 with a hybrid cgroup2 mount"}[mode]
	if what == "" {
		what = "no cgroup filesystem"
	}
	return fmt.Errorf("%w; this host runs %s: boot it with systemd.unified_cgroup_hierarchy=1, or use --cgroup-driver=cgroupfs "+
		"with the runtime's systemd cgroups off", errSystemdNeedsUnified, what)
}

func newTree(layout Layout, log *slog.Logger, be treeBackend, hier Hierarchies) *Tree {
	if log == nil {
		log = slog.Default()
	}
	return &Tree{
		log: log, be: be, hier: hier, layout: layout,
		kubepods:   layout.cgroup(qosComponents(v1.PodQOSGuaranteed)...),
		burstable:  layout.cgroup(qosComponents(v1.PodQOSBurstable)...),
		besteffort: layout.cgroup(qosComponents(v1.PodQOSBestEffort)...),
	}
}

// QoS cgroup names under kubepods.
const (
	burstableName  = "burstable"
	besteffortName = "besteffort"
)

// EnsureQOS creates <root>, <root>/kubepods and the Burstable and
// BestEffort QoS cgroups if missing, and sets: kubepods cpu shares from
// allocatableCPUMilli and its memory limit to allocatableMemory (the
// kubelet's --enforce-node-allocatable=pods; <= 0 leaves it unlimited),
// BestEffort the minimum shares, Burstable the shares of the last
// SetBurstableCPU (the minimum before). Safe to repeat: at start-up, and
// when allocatable changes. Lowering the memory limit below what the pods
// use fails (EBUSY on v1) and changes nothing else after it.
func (t *Tree) EnsureQOS(allocatableCPUMilli, allocatableMemory int64) error {
	if t.be == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	// Levels of --cgroup-root are created when missing but never written:
	// an existing one may belong to someone else.
	for _, dir := range t.layout.rootLevels() {
		if _, err := t.be.ensureDir(dir, false); err != nil {
			return fmt.Errorf("ensure cgroup root %s: %w", dir, err)
		}
	}
	shares := MilliCPUToShares(allocatableCPUMilli)
	top := Resources{CPUShares: &shares}
	if allocatableMemory > 0 {
		top.MemoryLimit = &allocatableMemory
	}
	burstable := MilliCPUToShares(t.burstableMilli)
	besteffort := minShares
	for _, q := range []struct {
		dir string
		r   Resources
	}{
		{t.kubepods, top},
		{t.burstable, Resources{CPUShares: &burstable}},
		{t.besteffort, Resources{CPUShares: &besteffort}},
	} {
		if _, err := t.be.ensureDir(q.dir, true); err != nil {
			return fmt.Errorf("ensure QoS cgroup %s: %w", q.dir, err)
		}
		if err := t.be.write(q.dir, q.r); err != nil {
			return fmt.Errorf("set QoS cgroup %s: %w", q.dir, err)
		}
	}
	t.qosReady = true
	t.log.Info("cgroup QoS tree ready", "cgroups", t.be.String(), "kubepods", t.kubepods,
		"kubepods_limits", top.String(), "burstable_shares", burstable)
	return nil
}

// SetBurstableCPU sets the Burstable QoS cgroup's cpu shares from the sum
// of the Burstable pods' cpu requests (PodCPURequestMilli), so they keep
// their share against Guaranteed pods as pods come and go. Before
// EnsureQOS it only records the value.
func (t *Tree) SetBurstableCPU(totalRequestMilli int64) error {
	if t.be == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.burstableMilli = totalRequestMilli
	if !t.qosReady {
		return nil
	}
	shares := MilliCPUToShares(totalRequestMilli)
	if err := t.be.write(t.burstable, Resources{CPUShares: &shares}); err != nil {
		return fmt.Errorf("set burstable cpu shares: %w", err)
	}
	return nil
}

// EnsurePod creates the pod cgroup parent (what Layout.PodParent returned)
// wherever the runtime will put the pod's containers, and writes r into
// it. Repeating it with other values updates the limits. The QoS cgroup
// must exist (EnsureQOS): otherwise the error wraps fs.ErrNotExist. A
// failure may leave the cgroup made: retry, or RemovePod.
func (t *Tree) EnsurePod(parent string, r Resources) error {
	if t.be == nil {
		return nil
	}
	podCgroupEnsures.Inc()
	if err := t.ensurePod(parent, r); err != nil {
		podCgroupEnsureErrors.Inc()
		return err
	}
	t.log.Debug("pod cgroup ready", "cgroup", parent, "limits", r.String())
	return nil
}

func (t *Tree) ensurePod(parent string, r Resources) error {
	if err := t.checkPod(parent); err != nil {
		return err
	}
	if pm, ok := t.be.(podMaker); ok {
		handled, err := pm.ensurePod(parent, r)
		if err != nil {
			return fmt.Errorf("ensure pod cgroup %s: %w", parent, err)
		}
		if handled {
			return nil
		}
	}
	if _, err := t.be.ensureDir(parent, true); err != nil {
		return fmt.Errorf("ensure pod cgroup %s: %w", parent, err)
	}
	if err := t.be.write(parent, r); err != nil {
		return fmt.Errorf("set pod cgroup %s limits: %w", parent, err)
	}
	return nil
}

// PodLimits reads back the limits of a pod cgroup; unset limits read as
// the kernel's defaults (no quota, no memory limit: -1). On v2 CPUShares is
// the smallest value that converts to the cpu.weight read.
func (t *Tree) PodLimits(parent string) (Resources, error) {
	if t.be == nil {
		return Resources{}, nil
	}
	if err := t.checkPod(parent); err != nil {
		return Resources{}, err
	}
	r, err := t.be.read(parent)
	if err != nil {
		return Resources{}, fmt.Errorf("read pod cgroup %s limits: %w", parent, err)
	}
	return r, nil
}

// RemovePod removes a pod cgroup (what Layout.PodParent returned): under
// the systemd driver it stops the pod's slice unit first; then it removes
// the directories left, the runtime's leftover container cgroups inside
// included, from every hierarchy (Hierarchies.RemovePod). It refuses a
// path that is not a pod cgroup of this tree. "" removes nothing.
func (t *Tree) RemovePod(parent string) error {
	if parent == "" || t.be == nil {
		return nil
	}
	if err := t.checkPod(parent); err != nil {
		return fmt.Errorf("refusing to remove %q: %w", parent, err)
	}
	if r, ok := t.be.(podRemover); ok {
		if err := r.removePod(parent); err != nil {
			return err
		}
	}
	return t.hier.RemovePod(parent)
}

// checkPod accepts only the pod cgroups PodParent makes under this tree's
// QoS cgroups, <root>/kubepods[/burstable|/besteffort]/pod<uid> (systemd:
// <kubepods slice>[/<qos slice>]/<that slice's name>-pod<uid>.slice), so a
// bad argument never creates, writes or removes a cgroup elsewhere.
func (t *Tree) checkPod(parent string) error {
	dir, base := path.Split(parent)
	dir = path.Clean(dir)
	ok := path.Clean(parent) == parent && (dir == t.kubepods || dir == t.burstable || dir == t.besteffort)
	if ok && t.layout.Driver.systemd() {
		uid, found := strings.CutPrefix(base, strings.TrimSuffix(path.Base(dir), sliceSuffix)+"-pod")
		uid, isSlice := strings.CutSuffix(uid, sliceSuffix)
		ok = found && isSlice && uid != "" && !strings.Contains(uid, "-") && poduid.Valid(uid)
	} else if ok {
		ok = strings.HasPrefix(base, "pod") && len(base) > len("pod")
	}
	if !ok {
		return fmt.Errorf("pod cgroup %q (tree %s): %w", parent, t.kubepods, ErrNotPodCgroup)
	}
	return nil
}
