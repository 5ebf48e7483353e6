// Package prober runs the liveness, readiness and startup probes of every
// pod on the node and reports what they say. Like pleg it produces per-pod
// events and knows nothing of the pipeline: a changed probe result is one
// more reason for a pass of the pod (Config.Notify), and the pass reads
// Status to set started and ready and to kill a container that failed.
//
// # Why not a goroutine per probe
//
// The kubelet gives every probe a goroutine with its own ticker. With
// thousands of pods and up to three probes per container that is
// thousands of goroutines and timers that sleep nearly all the time, and
// nothing bounds how many probe at once: a node's probes, falling due
// together, all dial or exec together. Here:
//
//   - one min-heap (container/heap) holds every armed probe by its next due
//     time, and one goroutine (the caller's, in Run) sleeps on one timer
//     until the earliest;
//   - due probes go to a fixed pool of workers (Config.Workers, 16 by
//     default) that run them, so goroutines do not grow with probes and at
//     most that many probes are in flight;
//   - a probe is on the heap at most once and is put back only when its run
//     ends, so a slow runtime delays probes and drops missed periods (as
//     the kubelet's ticker drops ticks) but never piles up runs.
//
// A probe costs a heap entry, its spec and handler prepared once (URL,
// headers, resolved port), and its metric series.
//
// # When probes run
//
// A container's probes start when Sync first sees it running (a new
// container ID), with results at the kubelet's initial values: liveness
// Success, readiness Failure, startup Unknown, and counts at zero. The
// first run is initialDelaySeconds after the container started plus a
// random offset within one period (jitter): the kubelet's workers reach
// the same spread through the phase of their tickers, and it keeps
// containers started together, or every pod after podline restarts, from
// being probed in the same instant. Later runs keep that phase, one period
// apart.
//
// A startup probe runs until it succeeds and holds liveness and readiness
// back until then; its success arms them at once (no jitter: a container
// that just proved itself started should become ready without waiting up
// to a period). A liveness or startup failure (failureThreshold runs in a
// row) puts the probe on hold until the container is replaced, as the
// kubelet's onHold: probing a container being killed only races its stop.
// A container that does not run is not probed. A terminating pod's
// liveness and startup probes stop at success, so shutdown is never
// turned into a kill.
//
// # What comes out
//
//   - Status(uid, container): Started, Ready, and Kill with the kubelet's
//     message and the probe's terminationGracePeriodSeconds; computed by
//     decide, a pure function of the results;
//   - Notify(uid) once per result change (not per run);
//   - events through Config.Recorder on every failed, errored or warned
//     run: Unhealthy "Liveness probe failed: <output>", ProbeWarning
//     "Readiness probe warning: Probe terminated redirects, ...";
//   - the kubelet's prober_probe_total and prober_probe_duration_seconds,
//     in the set Metrics, unregistered with their pod.
//
// # Handlers
//
// exec goes through the runtime (Execer); httpGet makes one connection
// per run and reads at most 10 KiB of a body, follows up to 10 redirects
// to the same host and counts a redirect elsewhere as a success with a
// warning; tcpSocket connects and closes. Plain HTTP and TCP to an
// address go through a socket of the probe's own (socket.go: about half
// the system calls of Go's dialer, which on a VM are most of a probe's
// cost); https and host names go through Go's dialer. grpc calls
// grpc.health.v1.Health/Check over one connection per run. Every run is
// bounded by timeoutSeconds. Messages are the kubelet's, word for word,
// since users search for them.
//
// # Lifecycle hooks
//
// RunHook runs a postStart or preStop action (exec, httpGet, sleep) once,
// for the containers stage, on the same handlers: no timeout but the
// caller's context, an exec failing on a non-zero exit, an httpGet on no
// answer at all (its status is not looked at, as the kubelet does not),
// and HookResult.Message words the failure as the kubelet does.
package prober
