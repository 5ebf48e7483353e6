package stages

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/internal/monotime"
	"github.com/podline/podline/pleg"
)

// Waiting is why a container is not running, as the status shows it.
type Waiting struct {
	Reason  string
	Message string
}

// Rejection is why admission refused a pod.
type Rejection struct {
	Reason  string
	Message string
}

// PodSync is the pipeline's memory of one pod between passes. Only the
// stage holding the pod's Work touches it.
type PodSync struct {
	// FirstSeen is when a source first delivered the pod.
	FirstSeen time.Time
	// Started is when the pod started (PodStart): its status's start time
	// and where its active deadline counts from. The pipeline sets it
	// before the pod's first pass.
	Started time.Time

	Admitted  bool
	Rejection *Rejection
	// StartBlocked is why the pod cannot start containers yet: a volume
	// that failed to mount, a sandbox the runtime could not make. The
	// status's PodReadyToStartContainers says it; cleared once past.
	StartBlocked Waiting
	// VolumesReady is set once the pod's volumes are in place.
	VolumesReady bool
	// Crash is the restart back-off per container name; ImagePull the pull
	// back-off per image.
	Crash     Backoff
	ImagePull Backoff
	// Waiting holds, per container name, why it is not running, as decided
	// by the containers stage of the last pass.
	Waiting map[string]Waiting
	// LastErr is the failure of the last pass, nil if it succeeded.
	LastErr error
	// Failures counts consecutive failed passes (for the retry back-off).
	Failures int
	// StartReported is set once the pod start latency was observed.
	StartReported bool
	// ExitsReported holds the container instances whose exit was
	// published, for the exit-to-status latency metric.
	ExitsReported map[string]bool
	// DeadlineReported is set once the pod's active deadline ending it was
	// reported as an event.
	DeadlineReported bool
	// FinishPublished is set once a pass published the pod as finished:
	// its sandbox is stopped in the pass after, so the ~100 ms stop never
	// delays the status.
	FinishPublished bool
	// OrphanName and OrphanNamespace identify a pod found in the runtime
	// that no source knows, for logs while it is torn down.
	OrphanName, OrphanNamespace string

	// postStart holds, by container ID, the postStart hooks started and
	// not yet taken in by a pass (see collectPostStart); the status shows
	// their containers as not running yet.
	postStart map[string]*postStartRun
}

// podRecord is one pod known to the pipeline.
type podRecord struct {
	uid types.UID

	mu sync.Mutex
	// desired is the latest pod from the sources; nil for orphans.
	desired *v1.Pod
	// removed is set when no source has the pod any more: tear down, then
	// forget it.
	removed  bool
	inFlight bool
	pending  bool
	// cancel ends the sync pass in flight when a teardown supersedes it.
	cancel   context.CancelFunc
	syncPass bool
	// staticName is the full name a static pod takes turns by (see
	// StaticTurn); "" for other pods.
	staticName string
	// rejected mirrors sync.Rejection where Upsert may read it: a rejected
	// pod never runs, so it never queues for a turn.
	rejected bool
	// hold keeps passes back while the pod backs off from a failed pass.
	hold passHold

	sync PodSync
}

func newRecord(uid types.UID, now time.Time) *podRecord {
	return &podRecord{uid: uid, sync: PodSync{
		FirstSeen: now,
		Crash:     NewBackoff(crashBackoffBase, crashBackoffMax),
		ImagePull: NewBackoff(imageBackoffBase, imageBackoffMax),
	}}
}

// tearingDown reports whether the next pass must stop the pod. Callers
// hold r.mu.
func (r *podRecord) tearingDown() bool {
	return r.desired == nil || r.removed || r.desired.DeletionTimestamp != nil
}

// startPassLocked builds the next pass from the latest desired state and
// clears pending. Callers hold r.mu and own an in-flight slot; cache (may
// be nil) is read for the pod's first pass, to date a pod adopted after a
// restart from its sandbox.
func (r *podRecord) startPassLocked(parent context.Context, now time.Time, turns *staticGate, cache *pleg.Cache) *Work {
	if r.sync.Started.IsZero() && r.desired != nil {
		var rt *pleg.Pod
		if cache != nil {
			rt = cache.Get(r.uid)
		}
		// A start read from the API or the runtime is a wall-clock time:
		// read against the clock once, here, so that a clock set later
		// neither ends the pod's active deadline at once nor holds it
		// an hour. The wall time, which the status reports, is the same.
		r.sync.Started = monotime.Anchor(PodStart(r.desired, r.sync.FirstSeen, rt), now)
	}
	w := &Work{UID: r.uid, Pod: r.desired, Sync: &r.sync, rec: r, passStart: now}
	switch {
	case r.tearingDown():
		w.Teardown = true
		w.Removed = r.removed || r.desired == nil
		w.route = routeTeardown
	case r.sync.Rejection != nil:
		w.route = routeStatus
	case r.staticName != "" && !turns.start(r.staticName, r.uid):
		// A pod of this name holds the turn (its teardown has not
		// finished) or waits before this one: admit and publish Pending,
		// set nothing up. The end of that turn wakes this pod.
		w.route = routeStatus
		if !r.sync.Admitted {
			w.route = routeAwaitTurn
		}
	case !r.sync.Admitted:
		w.route = routeFirstSync
	default:
		w.route = routeSync
	}
	w.ctx, w.cancel = context.WithCancel(parent)
	r.pending = false
	r.cancel = w.cancel
	r.syncPass = !w.Teardown
	return w
}
