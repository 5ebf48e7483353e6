package stages

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// StageID names a stage.
type StageID uint8

const (
	StageAdmit StageID = iota
	StageVolumes
	StageSandbox
	StageContainers
	StageStatus
	NumStages
)

var stageNames = [NumStages]string{"admit", "volumes", "sandbox", "containers", "status"}

func (s StageID) String() string {
	if s < NumStages {
		return stageNames[s]
	}
	return "unknown"
}

var (
	routeFirstSync = []StageID{StageAdmit, StageVolumes, StageSandbox, StageContainers, StageStatus}
	routeSync      = []StageID{StageVolumes, StageSandbox, StageContainers, StageStatus}
	routeStatus    = []StageID{StageStatus}
	routeAwaitTurn = []StageID{StageAdmit, StageStatus}
	routeTeardown  = []StageID{StageContainers, StageSandbox, StageVolumes, StageStatus}
)

// Work is one pass of one pod. Exactly one stage holds it at a time; the
// queue hand-off orders the stages' accesses, so its fields need no lock.
type Work struct {
	UID types.UID
	// Pod is the desired pod for this pass: a snapshot the pass must not
	// modify. It is nil when tearing down a pod no source knows (an orphan
	// found in the runtime).
	Pod *v1.Pod
	// Teardown is set when the pass stops the pod; Removed when no source
	// has it any more, so the pass also removes what is left of it.
	Teardown bool
	Removed  bool
	// Sync is the pipeline's memory of the pod, owned by the stage holding
	// the work.
	Sync *PodSync

	ctx    context.Context
	cancel context.CancelFunc
	rec    *podRecord
	route  []StageID
	step   int
	// asyncRounds counts background steps in this pass, to stop a plan that
	// never converges.
	asyncRounds int

	// err is the first failure of this pass; the status stage still runs,
	// then the pod is retried after its back-off.
	err error
	// requeueAfter asks for another pass after a delay (a back-off expiring).
	requeueAfter time.Duration

	enqueuedAt time.Time
	passStart  time.Time

	// start is the pass's place at the start gate; runtimeTime the time
	// its handlers spent in the runtime calls that start a pod, which is
	// what the gate's limit learns from.
	start       startPlace
	runtimeTime time.Duration
}

// timeRuntime adds the time since t0 to the pass's runtime time: deferred
// around the calls that make the runtime create or start something.
func (w *Work) timeRuntime(t0 time.Time) { w.runtimeTime += time.Since(t0) }

// Stage returns the stage currently holding the work.
func (w *Work) Stage() StageID { return w.route[w.step] }

// Err returns the failure of this pass so far, for the status stage.
func (w *Work) Err() error { return w.err }

// Context is cancelled when the pass is superseded (the pod is being torn
// down) or podline stops.
func (w *Work) Context() context.Context { return w.ctx }

// RequeueAfter asks for another pass of this pod after d, keeping the
// earliest request of the pass.
func (w *Work) RequeueAfter(d time.Duration) {
	if d <= 0 {
		return
	}
	if w.requeueAfter == 0 || d < w.requeueAfter {
		w.requeueAfter = d
	}
}

// Outcome is what a stage did with a pass.
type Outcome struct {
	// Err fails the pass: the status stage still runs so the failure shows,
	// and the pod is retried after an exponential back-off.
	Err error
	// SkipTo jumps forward to a later stage of the route (a rejected pod
	// goes straight to status).
	SkipTo StageID
	skip   bool
	// Async is slow work that must not hold a worker (stopping containers
	// waits up to their grace period). The pipeline runs it in the
	// background, outside the in-flight window, then hands the pass to the
	// same stage again, which re-plans with what the work changed.
	Async func(ctx context.Context) error
}

// Next is the outcome of a step that succeeded.
func Next() Outcome { return Outcome{} }

// Fail is the outcome of a failed step.
func Fail(err error) Outcome { return Outcome{Err: err} }

// Skip jumps to a later stage.
func Skip(to StageID) Outcome { return Outcome{SkipTo: to, skip: true} }

// Handler is one stage's work on one pass. Handle must not block on other
// pods and must not keep w after it returns.
type Handler interface {
	Handle(w *Work) Outcome
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(w *Work) Outcome

func (f HandlerFunc) Handle(w *Work) Outcome { return f(w) }
