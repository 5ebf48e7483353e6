package prober

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// DefaultWorkers is how many probes run at once unless Config says.
const DefaultWorkers = 16

// DefaultCoalesce is the scheduler's wake-up grid unless Config says:
// far below any period (1 s at least) and the 100 ms lateness the
// project allows itself, large enough that a burst has work for all the
// workers.
const DefaultCoalesce = 50 * time.Millisecond

// Config wires a Manager.
type Config struct {
	// Exec runs exec probes (podline's cri.Client); without it they error.
	Exec Execer
	// Notify is told the UID of a pod one of whose probe results changed,
	// once per change: the pipeline answers with a pass of the pod, which
	// reads Status. It is called from a worker and must not block.
	Notify func(types.UID)
	// Recorder receives the Unhealthy and ProbeWarning events; optional.
	Recorder Recorder
	// Workers bounds the probes running at once; DefaultWorkers if zero.
	Workers int
	// Clock is the scheduler's time; the real one if nil.
	Clock Clock
	// Coalesce rounds the scheduler's wake-ups up to this grid, so that
	// the probes falling due within it run as one burst; DefaultCoalesce
	// if zero, none if negative.
	Coalesce time.Duration
	Log      *slog.Logger
}

// Manager probes the containers of every pod it is given: one heap of
// due times, one goroutine waiting on it, a fixed pool of workers.
type Manager struct {
	cfg     Config
	clock   Clock
	workers int
	// jitter picks a probe's first run within one period; tests fix it.
	jitter func(period time.Duration) time.Duration
	work   chan *probe
	wake   chan struct{}
	// coalesce is the wake-up grid (0: none).
	coalesce time.Duration

	mu   sync.Mutex
	pods map[types.UID]*podEntry
	due  probeHeap
	// running counts probes taken off the heap and not yet finished.
	running int
}

// podEntry is a synced pod.
type podEntry struct {
	pod         *v1.Pod
	ip          string
	terminating bool
	containers  []*containerEntry
}

// containerEntry is one container of the spec that probes may concern: the
// app containers and the sidecars (init containers that keep running).
type containerEntry struct {
	name    string
	restart bool
	// id and startedAt are the running instance's; id is empty when none
	// runs.
	id        string
	startedAt time.Time
	probes    [numKinds]*probe
}

// started: no startup probe, or it succeeded for this instance.
func (c *containerEntry) started() bool {
	s := c.probes[Startup]
	return s == nil || s.st.result == resultSuccess
}

// probe is one probe of one container. Every field is guarded by
// Manager.mu; a run reads a snapshot and reports back under the lock.
type probe struct {
	kind    Kind
	pod     *podEntry
	c       *containerEntry
	spec    spec
	handler handler
	series  *series
	st      state

	// due is when the probe runs next; index is its place in the heap, -1
	// when not armed.
	due   time.Time
	index int
	// inflight: taken off the heap by the scheduler, not yet finished.
	// runDue and runGen are that run's due time and generation.
	inflight bool
	runDue   time.Time
	runGen   uint64
	// gen moves on whenever a run in flight must be thrown away: the
	// container changed or stopped, the pod terminates or is removed.
	gen uint64
	// stopped: a terminating pod's liveness or startup probe, which stands
	// at success and never runs again; removed: the pod is gone.
	stopped bool
	removed bool
}

// New returns a Manager; Run runs its probes.
func New(cfg Config) *Manager {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	m := &Manager{
		cfg:     cfg,
		clock:   cfg.Clock,
		workers: cfg.Workers,
		jitter:  func(p time.Duration) time.Duration { return rand.N(p) },
		work:    make(chan *probe),
		wake:    make(chan struct{}, 1),
		pods:    make(map[types.UID]*podEntry),
	}
	if m.clock == nil {
		m.clock = realClock{}
	}
	m.due.epoch = m.clock.Now()
	if m.workers <= 0 {
		m.workers = DefaultWorkers
	}
	switch {
	case cfg.Coalesce == 0:
		m.coalesce = DefaultCoalesce
	case cfg.Coalesce > 0:
		m.coalesce = cfg.Coalesce
	}
	return m
}

// Run runs the scheduler in the calling goroutine and the workers beside
// it until ctx ends; runs in flight are canceled and thrown away.
func (m *Manager) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range m.workers {
		wg.Go(func() { m.runWorker(ctx) })
	}
	m.schedule(ctx)
	wg.Wait()
}
