package cgroupfs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/containerd/cgroups/v3"
	"github.com/fsnotify/fsnotify"
)

// NotifyKind says what happened in a watched container cgroup.
type NotifyKind uint8

const (
	// Emptied: the last process in the cgroup exited (populated 1 → 0), or
	// the cgroup was already empty when it was watched.
	Emptied NotifyKind = iota + 1
	// OOMKill: the OOM killer killed a process in the cgroup.
	OOMKill
)

func (k NotifyKind) String() string {
	switch k {
	case Emptied:
		return "emptied"
	case OOMKill:
		return "oom_kill"
	}
	return fmt.Sprintf("NotifyKind(%d)", uint8(k))
}

// Notification is one event of a watched cgroup.
type Notification struct {
	Kind NotifyKind
	// CgroupID is the container's cgroup2 id, what Watch returned.
	CgroupID uint64
	// OOMKills is, for OOMKill, the cgroup's oom_kill counter after the
	// event; several kills read together arrive as one notification.
	OOMKills uint64
	// Time is when podline saw the event.
	Time time.Time
}

// ErrNotifierClosed is returned by Watch after Close.
var ErrNotifierClosed = errors.New("cgroup notifier closed")

var (
	notifiedEmptied  = metrics.NewCounter(`podline_cgroup_notifications_total{kind="emptied"}`)
	notifiedOOMKill  = metrics.NewCounter(`podline_cgroup_notifications_total{kind="oom_kill"}`)
	notifyOverflows  = metrics.NewCounter(`podline_cgroup_notify_overflows_total`)
	notifyWatchedCgs = metrics.NewGauge(`podline_cgroup_notify_watched_cgroups`, nil)
)

// Notifier turns kernel cgroup notifications into per-container Emptied and
// OOMKill notifications. Every watched cgroup shares one inotify instance
// (cgroup.events, and memory.events on a unified host) and, for v1 memory,
// one epoll instance over per-cgroup OOM eventfds, so an idle node costs no
// CPU and each event is one map lookup.
//
// File descriptors: two for the Notifier (inotify, epoll) plus, with v1
// memory, one eventfd per watched cgroup (memory.oom_control and
// cgroup.event_control are closed right after registering it), so 10,000
// containers take 10,002 of RLIMIT_NOFILE; none per cgroup on a unified
// host. Each cgroup also takes one inotify watch (two on a unified host,
// with memory.events) of fs.inotify.max_user_watches; past that limit a
// cgroup is polled instead (notify_poll.go).
//
// The Notifier only reads the cgroups it watches; registering an OOM
// eventfd through cgroup.event_control changes no setting.
type Notifier struct {
	log      *slog.Logger
	cgroup2  string // cgroup2 mount point
	memoryV1 string // v1 memory mount point; "" when memory is on cgroup2
	fsw      *fsnotify.Watcher
	addWatch func(file string) error // fsw.Add; a test's hook to meet the watch limit
	oom      *oomPoller              // nil without v1 memory
	// pollEvery is the period of polling cgroups the watch limit left
	// unwatched (see notify_poll.go).
	pollEvery time.Duration
	running   atomic.Bool

	mu      sync.Mutex
	closed  bool
	byID    map[uint64]*watched
	byFile  map[string]*watched // watched file path → its cgroup
	byOOM   map[uint64]*watched // oomPoller key → its cgroup
	polled  map[uint64]*watched // cgroups with a watch the limit refused
	pending []Notification
	wake    chan struct{} // 1 slot: pending is not empty
}

// watched is one cgroup's state; guarded by Notifier.mu.
type watched struct {
	id        uint64
	dir       string // cgroup2 directory
	memDir    string // v1 memory directory, "" on a unified host
	memEvents bool   // dir/memory.events holds the oom_kill counter
	// pollEvents, pollMem: the watch limit refused the watch of
	// cgroup.events, memory.events; Run polls the file instead.
	pollEvents, pollMem bool
	populated           bool
	kills               uint64

	// v1 memory OOM notification.
	efd         int // eventfd, -1 when none
	oomKey      uint64
	recheck     *time.Timer
	recheckStep int
	oomFired    time.Time
}

// NewNotifier finds the cgroup2 mount and where the memory controller
// lives. It fails on a host without a cgroup2 mount: there, container exits
// have no notification.
func NewNotifier(log *slog.Logger) (*Notifier, error) {
	all, err := readMounts()
	if err != nil {
		return nil, fmt.Errorf("read cgroup mounts: %w", err)
	}
	mounts := notifyMountsOf(all)
	if mounts.cgroup2 == "" {
		return nil, fmt.Errorf("cgroup notifier: no cgroup2 mount (mode %v): %w", cgroups.Mode(), errors.ErrUnsupported)
	}
	if cgroups.Mode() == cgroups.Unified {
		mounts.memoryV1 = ""
	}
	return newNotifier(log, mounts.cgroup2, mounts.memoryV1)
}

func newNotifier(log *slog.Logger, cgroup2, memoryV1 string) (*Notifier, error) {
	if log == nil {
		log = slog.Default()
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("cgroup notifier: %w", err)
	}
	n := &Notifier{
		log:       log,
		cgroup2:   cgroup2,
		memoryV1:  memoryV1,
		fsw:       fsw,
		byID:      make(map[uint64]*watched),
		byFile:    make(map[string]*watched),
		byOOM:     make(map[uint64]*watched),
		polled:    make(map[uint64]*watched),
		wake:      make(chan struct{}, 1),
		pollEvery: notifyPollPeriod,
	}
	n.addWatch = fsw.Add
	if memoryV1 != "" {
		if n.oom, err = newOOMPoller(); err != nil {
			fsw.Close()
			return nil, fmt.Errorf("cgroup notifier: %w", err)
		}
	}
	return n, nil
}

// Run delivers notifications to out, from this goroutine only, until ctx
// ends (it then returns nil) or the Notifier is closed. Notifications queued
// before Run starts (Watch of an empty cgroup) are delivered first. Only one
// Run may be active at a time.
func (n *Notifier) Run(ctx context.Context, out func(Notification)) error {
	if !n.running.CompareAndSwap(false, true) {
		return errors.New("cgroup notifier: Run already active")
	}
	defer n.running.Store(false)

	var oomDone chan error
	if n.oom != nil {
		oomDone = make(chan error, 1)
		go func() { oomDone <- n.oom.serve(n.onOOMEvents) }()
		defer func() {
			if oomDone == nil {
				return // serve already returned
			}
			n.oom.interrupt()
			<-oomDone
			n.oom.resume()
		}()
	}
	// pollTick is nil while nothing is polled: an idle notifier does not
	// wake.
	var pollTimer *time.Timer
	defer func() {
		if pollTimer != nil {
			pollTimer.Stop()
		}
	}()
	for {
		n.flush(out)
		var pollTick <-chan time.Time
		if n.polling() {
			if pollTimer == nil {
				pollTimer = time.NewTimer(n.pollEvery)
			}
			pollTick = pollTimer.C
		}
		select {
		case <-ctx.Done():
			return nil
		case now := <-pollTick:
			n.poll(now)
			pollTimer.Reset(n.pollEvery)
		case <-n.wake:
		case ev, ok := <-n.fsw.Events:
			if !ok {
				return n.closedErr("inotify events")
			}
			n.onFileEvent(ev)
		case err, ok := <-n.fsw.Errors:
			if !ok {
				return n.closedErr("inotify errors")
			}
			n.onWatcherError(err)
		case err := <-oomDone:
			oomDone = nil
			if n.isClosed() {
				return nil
			}
			return fmt.Errorf("cgroup notifier: oom epoll: %w", err)
		}
	}
}

func (n *Notifier) closedErr(what string) error {
	if n.isClosed() {
		return nil
	}
	return fmt.Errorf("cgroup notifier: %s channel closed", what)
}

func (n *Notifier) isClosed() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.closed
}

// queueLocked records a notification for Run to deliver.
func (n *Notifier) queueLocked(kind NotifyKind, w *watched, now time.Time) {
	n.pending = append(n.pending, Notification{Kind: kind, CgroupID: w.id, OOMKills: w.kills, Time: now})
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

func (n *Notifier) flush(out func(Notification)) {
	n.mu.Lock()
	batch := n.pending
	n.pending = nil
	n.mu.Unlock()
	for _, nt := range batch {
		switch nt.Kind {
		case Emptied:
			notifiedEmptied.Inc()
		case OOMKill:
			notifiedOOMKill.Inc()
		}
		out(nt)
	}
}

// Close releases every watch, the inotify and epoll instances; an active
// Run returns nil.
func (n *Notifier) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	n.pending = nil
	for id := range n.byID {
		n.unwatchLocked(id)
	}
	n.mu.Unlock()

	err := n.fsw.Close()
	if n.oom != nil {
		err = errors.Join(err, n.oom.close())
	}
	return err
}

// dropPendingLocked forgets queued notifications of an unwatched cgroup.
func (n *Notifier) dropPendingLocked(id uint64) {
	n.pending = slices.DeleteFunc(n.pending, func(nt Notification) bool { return nt.CgroupID == id })
}
