package stages

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/internal/delay"
	"github.com/podline/podline/pleg"
)

// Config wires a pipeline. Every handler is required.
type Config struct {
	// Window is the number of passes in flight at once; every stage queue
	// holds at least this many, which is what keeps hand-offs non-blocking.
	Window int
	// Workers per stage.
	Workers  [NumStages]int
	Handlers [NumStages]Handler
	// Queue is the implementation of the stage queues; the zero value is
	// the lock-free one.
	Queue QueueKind
	// Starts, when set, lets pod starts into the sandbox and containers
	// stages a few at a time, in arrival order (see StartGate).
	Starts *StartGate
	// Cache is the observed runtime state, used to find orphans: pods in the
	// runtime that no source knows.
	Cache *pleg.Cache
	// OnTornDown is called after a teardown pass succeeded; removed is set
	// when no source has the pod any more.
	OnTornDown func(uid types.UID, removed bool)
	Log        *slog.Logger
}

// backgroundHandler is a handler with work that outlives its passes (the
// containers stage's postStart hooks): before the first pass, it is handed
// the pipeline's lifetime to run that work under and a way to ask for a
// pass of a pod once the work is done, which goes through the retry queue
// so that the caller never parks on the window.
type backgroundHandler interface {
	runInBackground(ctx context.Context, wake func(types.UID))
}

// DefaultWorkers suits a real runtime on a small node and a fake runtime
// with containerd-like latencies at 10,000 pods: the sandbox and container
// stages spend their time waiting on the runtime, so they get many workers;
// a parked worker costs a small stack and no CPU.
var DefaultWorkers = [NumStages]int{StageAdmit: 2, StageVolumes: 8, StageSandbox: 64, StageContainers: 64, StageStatus: 4}

// maxAsyncRounds bounds background steps in one pass.
const maxAsyncRounds = 4

// Pipeline runs pods through the stages. See the package doc.
type Pipeline struct {
	cfg    Config
	queues [NumStages]StageQueue[*Work]
	// gate holds one token per pass in flight.
	gate  chan struct{}
	retry *delay.Queue[types.UID]
	// turns orders the starts of static pods that share a full name.
	turns *staticGate

	ctx     context.Context
	started chan struct{}
	ready   atomic.Bool // every source has delivered once

	mu      sync.Mutex
	records map[types.UID]*podRecord
}

// New checks cfg and builds a pipeline; Run starts it.
func New(cfg Config) (*Pipeline, error) {
	if cfg.Window < 1 {
		return nil, fmt.Errorf("pipeline window must be at least 1, got %d", cfg.Window)
	}
	for s := StageID(0); s < NumStages; s++ {
		if cfg.Handlers[s] == nil {
			return nil, fmt.Errorf("no handler for stage %s", s)
		}
		if cfg.Workers[s] < 1 {
			return nil, fmt.Errorf("stage %s needs at least one worker, got %d", s, cfg.Workers[s])
		}
	}
	if cfg.Queue >= numQueueKinds {
		return nil, fmt.Errorf("unknown stage queue kind %d", cfg.Queue)
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	p := &Pipeline{
		cfg:     cfg,
		gate:    make(chan struct{}, cfg.Window),
		started: make(chan struct{}),
		records: make(map[types.UID]*podRecord),
		turns:   newStaticGate(),
	}
	for s := range p.queues {
		p.queues[s] = newStageQueue[*Work](cfg.Queue, cfg.Window)
	}
	p.retry = delay.New(p.Sync)
	if cfg.Starts != nil {
		cfg.Starts.admit = p.enqueue
	}
	return p, nil
}

// Run starts the workers and blocks until ctx ends. Pods keep running when
// podline stops; the next start adopts them.
//
// The workers stop on ctx, not on closed queues: a worker still handling a
// pass when ctx ends hands it on with TryPut, which must keep succeeding
// until every worker has returned (the window promises room).
func (p *Pipeline) Run(ctx context.Context) {
	p.ctx = ctx
	for _, h := range p.cfg.Handlers {
		if b, ok := h.(backgroundHandler); ok {
			b.runInBackground(ctx, p.wake)
		}
	}
	var wg sync.WaitGroup
	for s := StageID(0); s < NumStages; s++ {
		for range p.cfg.Workers[s] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.worker(ctx, s)
			}()
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.retry.Run(ctx)
	}()
	close(p.started)
	wg.Wait()
	if p.cfg.Starts != nil {
		p.cfg.Starts.stop()
	}
}

// Upsert hands the pipeline the latest desired state of a pod (added,
// updated, or marked for graceful deletion). It parks while the window is
// full.
func (p *Pipeline) Upsert(pod *v1.Pod) {
	uid := pod.UID
	p.mu.Lock()
	rec := p.records[uid]
	if rec == nil {
		rec = newRecord(uid, time.Now())
		p.records[uid] = rec
		podsKnown.Inc()
	}
	p.mu.Unlock()

	rec.mu.Lock()
	rec.hold = holdOnUpdate(rec.hold, rec.desired, pod)
	rec.desired = pod
	rec.removed = false
	wake := p.queueForTurnLocked(rec)
	p.supersedeLocked(rec)
	rec.mu.Unlock()
	p.wake(wake)
	p.submit(rec)
}

// Remove tears a pod down and forgets it: no source has it any more.
func (p *Pipeline) Remove(uid types.UID) {
	p.mu.Lock()
	rec := p.records[uid]
	p.mu.Unlock()
	if rec == nil {
		return
	}
	rec.mu.Lock()
	rec.removed = true
	wake := p.queueForTurnLocked(rec)
	p.supersedeLocked(rec)
	rec.mu.Unlock()
	p.wake(wake)
	p.submit(rec)
}

// queueForTurnLocked keeps a static pod's place in its name's start order
// in line with its desired state: queued while it should run, out of the
// queue once it is to be torn down (the turn it may hold is released only
// when the teardown has finished). It returns a pod to wake.
func (p *Pipeline) queueForTurnLocked(rec *podRecord) (wake types.UID) {
	if rec.staticName == "" {
		rec.staticName = StaticFullName(rec.desired)
	}
	switch {
	case rec.staticName == "":
	case rec.tearingDown() || rec.rejected:
		return p.turns.withdraw(rec.staticName, rec.uid)
	default:
		if behind := p.turns.want(rec.staticName, rec.uid); behind != "" {
			p.cfg.Log.Info("static pod waits for the previous pod of its name to be torn down",
				"pod", rec.staticName, "uid", rec.uid, "previous", behind)
		}
	}
	return ""
}

// wake starts a pass of a static pod whose turn has come. The pass goes
// through the retry queue so that the caller, perhaps a stage worker, never
// parks on the window.
func (p *Pipeline) wake(uid types.UID) {
	if uid != "" {
		p.retry.After(uid, 0)
	}
}

// supersedeLocked cancels a sync pass in flight when the pod must now be
// torn down, so a slow pull or start does not delay the stop.
func (p *Pipeline) supersedeLocked(rec *podRecord) {
	if rec.tearingDown() && rec.syncPass && rec.cancel != nil {
		rec.cancel()
	}
}

// Sync asks for a pass of a pod whose runtime state changed, or whose
// back-off expired. A pod no source knows is torn down once every source
// has delivered, so runtime leftovers of deleted pods do not linger.
func (p *Pipeline) Sync(uid types.UID) {
	p.mu.Lock()
	rec := p.records[uid]
	if rec == nil && p.ready.Load() && p.cfg.Cache != nil && !p.cfg.Cache.Get(uid).Empty() {
		rec = p.adoptOrphanLocked(uid)
	}
	p.mu.Unlock()
	if rec != nil {
		p.submit(rec)
	}
}

// SourcesReady tells the pipeline that every source has delivered its
// pods: whatever else the runtime holds belongs to no one.
func (p *Pipeline) SourcesReady() {
	if p.ready.Swap(true) || p.cfg.Cache == nil {
		return
	}
	var orphans []*podRecord
	p.mu.Lock()
	for _, uid := range p.cfg.Cache.UIDs() {
		if p.records[uid] == nil {
			orphans = append(orphans, p.adoptOrphanLocked(uid))
		}
	}
	p.mu.Unlock()
	for _, rec := range orphans {
		p.submit(rec)
	}
}

func (p *Pipeline) adoptOrphanLocked(uid types.UID) *podRecord {
	rec := newRecord(uid, time.Now())
	rec.removed = true
	if rt := p.cfg.Cache.Get(uid); rt != nil {
		rec.sync.OrphanName, rec.sync.OrphanNamespace = rt.Name, rt.Namespace
	}
	p.records[uid] = rec
	podsKnown.Inc()
	p.cfg.Log.Info("tearing down pod no source knows", "uid", uid,
		"pod", rec.sync.OrphanNamespace+"/"+rec.sync.OrphanName)
	return rec
}

// Known reports whether the pipeline tracks uid.
func (p *Pipeline) Known(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.records[uid] != nil
}

// Len returns the number of pods the pipeline tracks.
func (p *Pipeline) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.records)
}

// Idle reports whether no pass is in flight or waiting for a retry.
func (p *Pipeline) Idle() bool {
	return len(p.gate) == 0 && p.retry.Pending() == 0
}

func (p *Pipeline) forget(rec *podRecord) {
	p.mu.Lock()
	rec.mu.Lock()
	gone := rec.removed && !rec.inFlight
	rec.mu.Unlock()
	if gone && p.records[rec.uid] == rec {
		delete(p.records, rec.uid)
		podsKnown.Dec()
	}
	p.mu.Unlock()
	if gone {
		p.retry.Cancel(rec.uid)
	}
}

var errNotConverging = errors.New("plan did not converge")
