// Package stages is podline's pod pipeline: pod work flows through five
// bounded queues (lock-free by default; a buffered-channel StageQueue exists
// to measure that choice), each drained by its own worker pool:
//
//	admit → volumes → sandbox → containers → status
//
// The package owns the pipeline's per-pod memory (admission, back-off,
// waiting reasons) and the decisions each stage makes. It does not own the
// runtime (cri/), the observed runtime state (pleg/) or where pods come from
// (sources/); those arrive through narrow interfaces wired in cmd/.
//
// # Passes
//
// A pass is one trip of one pod through a route of stages. A pod is in at
// most one stage at a time: a pass holds the pod from its first stage to its
// last. Updates that arrive meanwhile (a new spec, a runtime event, a retry
// timer) are coalesced into one pending flag on the pod, and the pass that
// follows reads the latest spec: latest wins. After a failed pass the next
// pass of the same kind waits out the step back-off (500 ms doubling to
// 1 min), whatever asks for it: events keep coming to a failing pod. A
// teardown never waits for a failed start, nor a start for a failed
// teardown. Routes:
//
//	first sync   admit → volumes → sandbox → containers → status
//	sync         volumes → sandbox → containers → status
//	rejected     status
//	waiting      admit → status (status alone once admitted)
//	teardown     containers → sandbox → volumes → status
//
// Each stage's decision (what to create, kill or restart) is a pure function
// of the desired pod and the observed runtime state (PlanSandbox,
// PlanContainers, PodStatus, Admit): the stage plans, then executes the plan.
//
// # Pod lifecycle
//
//	          ADD
//	           │
//	           ▼            reject
//	       ┌────────┐ ───────────────► Rejected (phase Failed, never runs)
//	       │ admit  │
//	       └────────┘
//	           │ admitted
//	           ▼
//	       ┌────────┐  a static pod whose name an earlier static pod still
//	       │waiting │  holds (an edited manifest): Pending, nothing set up,
//	       └────────┘  until that pod's teardown has finished
//	           │ its turn
//	           ▼
//	       ┌────────┐  step fails: status shows why, retry after back-off
//	┌─────►│ syncing│◄──────────────────────────────────────────┐
//	│      └────────┘                                           │
//	│          │ sandbox ready, containers started              │
//	│          ▼                                                │
//	│      ┌────────┐  container exits (runtime event):         │
//	│      │ running│──── restart now, or CrashLoopBackOff ─────┘
//	│      └────────┘     (10s doubling to 5m, reset after 10m up)
//	│          │ all containers done and none restart, or
//	│          │ activeDeadlineSeconds passed: Failed/DeadlineExceeded
//	│          │ is published, then the containers stop within their
//	│          │ grace period (whatever the restart policy)
//	│          ▼
//	│      ┌────────┐
//	│      │finished│  sandbox stopped, containers kept for their status
//	│      └────────┘  and logs (phase Succeeded or Failed)
//	│          │
//	│  UPDATE  │ REMOVE / DELETE (from any state)
//	└──────────┤
//	           ▼
//	       ┌─────────┐ containers stopped within the grace period, then
//	       │tearing  │ sandboxes stopped and removed, volumes and pod
//	       │down     │ cgroup removed
//	       └─────────┘
//	           │
//	           ▼
//	       forgotten (unless re-added meanwhile: then a sync pass follows)
//
// # Static pods of one name
//
// An edited manifest is a new static pod (its UID hashes the content) with
// the old one's namespace/name, and the two versions share host ports and
// data directories (kubeadm's etcd and kube-apiserver). As in the kubelet,
// a static pod starts only once the static pod of its name that started
// before it has finished its teardown; pods waiting meanwhile start first
// come, first served, skipping those torn down before their turn (after
// quick edits, only the last version starts). The teardown's end wakes the
// next in line. API pods neither wait nor are waited for. StaticTurn is the
// rule; the pipeline keeps one per name.
//
// # Active deadlines
//
// A pod's activeDeadlineSeconds counts from its start time (PodStart),
// fixed at its first pass: the start the API object carries, else when it
// was first seen or, adopted after a restart of podline, when its oldest
// sandbox was made. So a restart does not reset a deadline, and a pod its
// deadline ended stays Failed; one that finished on its own before its
// deadline keeps its phase (the runtime keeps the exit times). Waiting
// for a deadline is a timer, not a poll: every pass that ends asks the one
// retry queue for a pass at the deadline, the earliest request per pod
// wins (a back-off retry or a runtime event may come first; their pass
// asks again), and a waiting pod costs one queue entry, no goroutine. The
// deadline is read from the latest spec at each pass, so a lowered one
// takes effect at once.
//
// # Backpressure
//
// At most Window passes are in flight, and every queue holds at least Window
// items, so a stage handing a pass to the next never blocks and the stage
// graph (which has cycles: teardown runs it backwards) cannot deadlock.
// Whoever starts a pass (the source dispatcher, the lifecycle events, the
// retry timer) parks while the window is full: that is the pipeline pushing
// back on its producers.
//
// # Start gate
//
// On a node whose runtime is CPU-bound (runc and the shims share two cores
// with everything else), handing it every pod of a burst at once makes
// each start slower and no more of them finish per second: all the pods
// turn Running together at the end. The start gate (StartGate, set by
// --start-concurrency) lets pod starts into the sandbox and containers
// stages a few at a time, in the order they reach it, so that pods finish
// one after another: a burst's median pod is Running in about half the
// time, and the last no later.
//
// The limit adapts (StartLimit): it climbs while more starts at once pay
// in throughput and stops where they no longer do. Each start that did
// runtime work reports when it ended and the time its handlers spent in
// RunPodSandbox, CreateContainer and StartContainer. In rounds of
// max(limit, 4) starts, a round in which every start that ended had others
// waiting for its place measures the runtime's throughput (starts over the
// time since the previous round). After a raise by a factor r, a round
// that brought at least a quarter of the proportional gain, and at least
// 5 %, is followed by another raise: ×4 while no raise has failed (slow
// start), else max(1, limit/8). A raise that did not pay is undone,
// and the round after the cut is not measured. A round that was not
// limited resets the reference and slow start. The limit starts at 4 and
// stays between 2 and the sandbox and containers stages' workers together. A
// CPU-bound runtime (3 starts at once already keep it busy) holds it near
// its knee, probing one step above; a runtime whose starts wait (the fake
// one) sees it reach the workers within four rounds.
//
// A start holds its place from the sandbox stage until it leaves the
// containers stage. Teardown passes never wait at the gate. A start that
// holds its place longer than ten times the fastest recent start (2 to
// 30 s; an image pull, a hung call) stops counting, so one slow pod never holds the others back,
// and a pass cancelled while it waits (its pod is being deleted) goes on
// at once without a place.
//
// # Restarts
//
// podline keeps no state of its own on disk. After a restart the first
// relist fills the runtime cache from the CRI labels, the sources deliver
// the same pods (static pods have content-derived UIDs), and the plans find
// the sandboxes and containers already there: nothing is created twice.
package stages
