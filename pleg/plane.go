package pleg

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/internal/delay"
)

// InspectRuntime is what a targeted inspection reads.
type InspectRuntime interface {
	ContainerStatus(ctx context.Context, id string) (*runtimeapi.ContainerStatus, error)
	PodSandboxStatus(ctx context.Context, id string) (*runtimeapi.PodSandboxStatus, error)
}

// KernelWatcher is the eBPF tracer as the plane drives it: it reports
// exits, OOM victims and emptied cgroups only for watched cgroup ids.
type KernelWatcher interface {
	Watch(cgroupID uint64) error
	Unwatch(cgroupID uint64) error
}

// CgroupWatcher is the cgroup notification source as the plane drives it.
// Watch takes a cgroup path relative to the hierarchy roots and returns
// the cgroup2 id; an already empty cgroup is reported at once.
type CgroupWatcher interface {
	Watch(path string) (uint64, error)
	Unwatch(id uint64)
}

var (
	planeExits = metrics.NewCounter(`podline_pleg_kernel_exits_total`)
	// planeExitsDropped counts kernel exit reports the runtime denied: it
	// still said the container ran when the round of looks ended.
	planeExitsDropped = metrics.NewCounter(`podline_pleg_kernel_exits_dropped_total`)
	// planeExitsUnanswered counts kernel exit reports whose round ended
	// with the runtime failing to answer (restarting, timing out): no
	// word on the container either way, so not a sign of a forged exit.
	planeExitsUnanswered = metrics.NewCounter(`podline_pleg_kernel_exits_unanswered_total`)
	planeEmptied         = metrics.NewCounter(`podline_pleg_cgroup_emptied_total`)
	planeInspections     = metrics.NewCounter(`podline_pleg_inspections_total`)
	planeLagging         = metrics.NewCounter(`podline_pleg_inspections_runtime_lagging_total`)
	containerOOMs        = metrics.NewCounter(`podline_oom_kills_total{scope="container"}`)
	systemOOMs           = metrics.NewCounter(`podline_oom_kills_total{scope="system"}`)
	planeWatched         = metrics.NewGauge(`podline_pleg_watched_cgroups`, nil)
)

const (
	// The runtime learns of an exit after the kernel (containerd reports a
	// container exited only once its task is deleted: ~100 ms here): the
	// first look is a moment later, then again with waits growing by half,
	// about 4 s in all.
	firstLook       = 15 * time.Millisecond
	maxLookAttempts = 12
	// While the cgroup is empty the runtime is behind for sure: a minute
	// more of looks, every 2 s.
	lagLook  = 2 * time.Second
	lagLooks = 30
	// inspectParallel bounds concurrent targeted inspections.
	inspectParallel = 8
)

// PlaneConfig wires a Plane. Kernel and Cgroups are optional: an
// unavailable source is nil and the others carry on.
type PlaneConfig struct {
	Runtime InspectRuntime
	Cache   *Cache
	Notify  func(types.UID)
	Kernel  KernelWatcher
	Cgroups CgroupWatcher
	// CgroupMount is the cgroup2 mount point (for ids when Cgroups is nil).
	CgroupMount string
	// Layout places a container's cgroup in its pod cgroup
	// (ContainerCgroup); the zero value is the cgroupfs driver's.
	Layout cgroupfs.Layout
	// OnSystemOOM is told of OOM kills outside any pod.
	OnSystemOOM func(pid uint32, at time.Time)
	// OnContainerOOM is told, once per container, that the kernel killed a
	// process of it for memory.
	OnContainerOOM func(uid types.UID, containerID string, pid uint32, at time.Time)
	Log            *slog.Logger
}

// Plane is the event plane: it knows which cgroup belongs to which
// container, turns kernel and cgroup events into cache updates and
// targeted inspections of one container, and tells the pipeline. It never
// lists the runtime.
type Plane struct {
	cfg PlaneConfig
	ctx context.Context
	sem chan struct{}
	// looks holds container (or sandbox) IDs due for an inspection.
	looks *delay.Queue[string]
	// firstLook, maxLooks and lagLook shape a confirmation round (tests
	// shorten it).
	firstLook time.Duration
	maxLooks  int
	lagLook   time.Duration

	mu sync.Mutex
	// cgroups is cfg.Cgroups, or the notifier SetCgroups gave later.
	cgroups  CgroupWatcher
	byID     map[string]*watched
	byCgroup map[uint64]*watched
	// bySandbox: the IDs watched in each sandbox, so that a sandbox's
	// removal does not look through every container on the node (at
	// 10,000 pods a tenth of a teardown's CPU went to that search).
	bySandbox map[string]map[string]struct{}
}

// watched is one registered container or sandbox.
type watched struct {
	uid       types.UID
	sandboxID string
	id        string // container ID, or the sandbox ID for a sandbox
	sandbox   bool
	cgroupID  uint64
	path      string // cgroup path relative to the hierarchy roots
	notified  bool   // the cgroup notifier watches it
	oom       bool   // the OOM killer struck in this cgroup
	// A round is the inspections one kernel signal sets off, until the
	// runtime confirms a change or maxLooks of them found none.
	round bool
	looks int // inspections of this round that found the runtime behind the kernel
	// claim is the kernel's exit report the round waits to see
	// confirmed (claimed: there is one); a round that ends without it
	// drops the report.
	claimed bool
	claim   int32
	// denied: a dropped report of this container was logged already.
	denied bool
	// inspecting: an inspection of it is under way; again: a look fell
	// due meanwhile, to be taken when that one ends (two at once would
	// each count a look, and end the round after half of them).
	inspecting, again bool
}

// NewPlane builds an event plane; Run serves its inspections.
func NewPlane(cfg PlaneConfig) *Plane {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	p := &Plane{
		cfg:       cfg,
		cgroups:   cfg.Cgroups,
		ctx:       context.Background(),
		sem:       make(chan struct{}, inspectParallel),
		byID:      make(map[string]*watched),
		byCgroup:  make(map[uint64]*watched),
		bySandbox: make(map[string]map[string]struct{}),
		firstLook: firstLook,
		maxLooks:  maxLookAttempts,
		lagLook:   lagLook,
	}
	p.looks = delay.New(p.startInspection)
	return p
}

// Run serves inspections until ctx ends.
func (p *Plane) Run(ctx context.Context) {
	p.ctx = ctx
	p.looks.Run(ctx)
}

// ContainerStarted registers a container podline just started, so its
// exit is reported. cgroupParent is the pod cgroup ("" when pods get no
// cgroup of their own: then only the CRI events and the relist see it).
func (p *Plane) ContainerStarted(uid types.UID, sandboxID, containerID, cgroupParent string) {
	p.register(&watched{uid: uid, sandboxID: sandboxID, id: containerID}, cgroupParent)
}

// SandboxStarted registers a sandbox, whose cgroup empties if it dies.
func (p *Plane) SandboxStarted(uid types.UID, sandboxID, cgroupParent string) {
	p.register(&watched{uid: uid, sandboxID: sandboxID, id: sandboxID, sandbox: true}, cgroupParent)
}

func (p *Plane) register(w *watched, cgroupParent string) {
	cgroups := p.cgroupWatcher()
	if cgroupParent == "" || (p.cfg.Kernel == nil && cgroups == nil) {
		return
	}
	path := p.cfg.Layout.ContainerCgroup(cgroupParent, w.id)
	w.path = path
	var err error
	if cgroups != nil {
		if w.cgroupID, err = cgroups.Watch(path); err == nil {
			w.notified = true
		} else if !errors.Is(err, fs.ErrNotExist) {
			// The notifier's failure (out of file descriptors, say) is
			// not the kernel tracer's: that needs only the cgroup's id.
			p.cfg.Log.Warn("cannot watch cgroup for notifications; the other sources carry on", "path", path, "err", err)
		}
	}
	if !w.notified {
		w.cgroupID, err = cgroupfs.CgroupID(filepath.Join(p.cfg.CgroupMount, path))
	}
	if err != nil {
		// Gone already (it exited and was cleaned up) or never made: one
		// look settles it.
		p.cfg.Log.Debug("cannot watch cgroup", "path", path, "err", err)
		w.round, w.looks = true, p.maxLooks-1 // one look, no retries: nothing will wake us
		p.addLocked(w, false)
		p.looks.After(w.id, 0)
		return
	}
	if p.cfg.Kernel != nil {
		if err := p.cfg.Kernel.Watch(w.cgroupID); err != nil {
			p.cfg.Log.Warn("cannot watch cgroup in the kernel", "path", path, "err", err)
		}
	}
	p.addLocked(w, true)
	if !w.notified {
		// A missing or unreadable cgroup.events counts as empty.
		if live, err := cgroupfs.Populated(filepath.Join(p.cfg.CgroupMount, path)); err != nil || !live {
			// It may have exited before the kernel filter knew it.
			p.restartRound(w)
		}
	}
}

func (p *Plane) addLocked(w *watched, hasCgroup bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if old := p.byID[w.id]; old != nil {
		delete(p.byCgroup, old.cgroupID)
		p.unindexLocked(old)
	} else {
		planeWatched.Inc()
	}
	p.byID[w.id] = w
	if hasCgroup {
		p.byCgroup[w.cgroupID] = w
	}
	in := p.bySandbox[w.sandboxID]
	if in == nil {
		in = make(map[string]struct{}, 2)
		p.bySandbox[w.sandboxID] = in
	}
	in[w.id] = struct{}{}
}

func (p *Plane) unindexLocked(w *watched) {
	if in := p.bySandbox[w.sandboxID]; in != nil {
		delete(in, w.id)
		if len(in) == 0 {
			delete(p.bySandbox, w.sandboxID)
		}
	}
}

// ContainerRemoved forgets a container.
func (p *Plane) ContainerRemoved(containerID string) { p.forget(containerID) }

// SandboxRemoved forgets a sandbox and every container in it.
func (p *Plane) SandboxRemoved(sandboxID string) {
	p.mu.Lock()
	ids := slices.Collect(maps.Keys(p.bySandbox[sandboxID]))
	p.mu.Unlock()
	for _, id := range ids {
		p.forget(id)
	}
}

func (p *Plane) forget(id string) {
	p.mu.Lock()
	w := p.byID[id]
	if w != nil {
		delete(p.byID, id)
		p.unindexLocked(w)
		if p.byCgroup[w.cgroupID] == w {
			delete(p.byCgroup, w.cgroupID)
		}
		planeWatched.Dec()
	}
	p.mu.Unlock()
	p.looks.Cancel(id)
	if w == nil || w.cgroupID == 0 {
		return
	}
	if p.cfg.Kernel != nil {
		_ = p.cfg.Kernel.Unwatch(w.cgroupID)
	}
	if w.notified {
		if cgroups := p.cgroupWatcher(); cgroups != nil {
			cgroups.Unwatch(w.cgroupID)
		}
	}
}

// Watched returns the number of registered containers and sandboxes.
func (p *Plane) Watched() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.byID)
}

func (p *Plane) lookup(cgroupID uint64) *watched {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.byCgroup[cgroupID]
}
