package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/podline/podline/cri"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// relKill runs one kill -9 case: N pods handed over at once, podline
// killed at the case's moment, restarted on the same directories, and
// the runtime and /pods checked until every invariant holds and still
// holds relStability later.
func (s *suite) relKill(ctx context.Context, c relCase, r *relRun, label string) error {
	r.Invariant = "after the restart: no pod with two ready sandboxes or two running containers of one name; " +
		"every manifest's pod Running in /pods with its sandbox and container in the runtime; " +
		"no sandbox or container of a pod without manifest; restart count 0 and attempt 0 (the runtime ended nothing); " +
		fmt.Sprintf("converged within %s", relConverge)
	if c.kind == relTeardown {
		r.Invariant = "after the restart: nothing left in the runtime (no sandbox or container in any state) and no pod in /pods; " +
			fmt.Sprintf("converged within %s", relConverge)
	}
	dir, err := os.MkdirTemp(s.tmp, "rel-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	control := filepath.Join(dir, "control.sock")
	f, err := startFakeCRI(ctx, s.fakecri, dir, relRuntime, "--control", control)
	if err != nil {
		return err
	}
	defer f.stop(5 * time.Second)
	rt, err := cri.Dial(ctx, "unix://"+f.socket, "", 30*time.Second)
	if err != nil {
		return fmt.Errorf("dial the fake CRI: %w", err)
	}
	defer rt.Close()
	k := key(podline, dflt, relRuntime, c.pods)
	a, err := startPodline(ctx, s.podline, dir, "unix://"+f.socket, k)
	if err != nil {
		return err
	}
	defer func() { release(a, label) }() // a is the restarted agent by then
	if err := sleep(ctx, min(3*time.Second, s.settle())); err != nil {
		return err
	}

	w := newPodWriter(a.manifests())
	want := map[string]bool{}
	names := make([]string, c.pods)
	for i := range names {
		if names[i], err = w.add(fmt.Sprintf("bench-%05d", i)); err != nil {
			return fmt.Errorf("write manifest %d: %w", i, err)
		}
		want[names[i]] = true
	}
	switch c.kind {
	case relKill:
		target := int(c.frac * float64(c.pods))
		err = untilRuntime(ctx, rt, a, label, func(ready, running int) bool { return running >= target })
	case relIdle, relTeardown:
		err = newWatcher(a, c.pods).allRunning(ctx, label, names, 2*time.Minute+time.Duration(c.pods)*20*time.Millisecond)
		if err == nil && c.kind == relTeardown {
			if err = w.removeAll(); err == nil {
				clear(want)
				err = untilRuntime(ctx, rt, a, label, func(ready, _ int) bool { return ready <= c.pods/2 })
			}
		}
	}
	if err != nil {
		return err
	}
	a.cmd.Process.Signal(syscall.SIGKILL)
	<-a.done
	if r.KilledReady, r.KilledRunning, err = runtimeCounts(ctx, rt); err != nil {
		return err
	}
	progress("%s: podline killed with %d sandboxes ready, %d containers running", label, r.KilledReady, r.KilledRunning)
	calls0, err := fakeCalls(ctx, control)
	if err != nil {
		return fmt.Errorf("fake CRI call counts: %w", err)
	}
	// The killed agent's log stays beside the new one's.
	os.Rename(a.logPath, filepath.Join(dir, "podline-killed.log"))

	restart := time.Now()
	if a, err = startPodline(ctx, s.podline, dir, "unix://"+f.socket, k); err != nil {
		return fmt.Errorf("restart podline on the same directories: %w", err)
	}
	vs, conv, err := relConvergence(ctx, rt, a, want, restart, label, nil)
	if err != nil {
		return err
	}
	r.ConvergeSec = conv
	calls1, err := fakeCalls(ctx, control)
	if err != nil {
		return fmt.Errorf("fake CRI call counts: %w", err)
	}
	r.CallsAfterKill = map[string]int64{}
	for m, n := range calls1 {
		if d := n - calls0[m]; d > 0 && isMutation(m) {
			r.CallsAfterKill[m] = d
		}
	}
	r.Left = vs.left
	r.Violations = byInvariant(vs.vs)
	for i, v := range vs.vs {
		if i == 10 {
			break
		}
		r.ViolationSamples = append(r.ViolationSamples, v.String())
	}
	switch {
	case len(vs.vs) > 0:
		r.Verdict = fmt.Sprintf("%d violation(s) %s after the restart; logs kept in %s", len(vs.vs), vs.when, keepLogs(dir))
	case conv > relConverge.Seconds():
		r.Verdict = fmt.Sprintf("invariants hold, but only %.1fs after the restart (target %s)", conv, relConverge)
	default:
		r.Pass = true
		r.Verdict = fmt.Sprintf("every invariant holds %.2fs after the restart and %s later", conv, relStability)
	}
	return nil
}

// relEnd is the state a convergence ended in.
type relEnd struct {
	vs   []violation
	left leftovers
	when string
}

// relConvergence checks the invariants until they hold (the convergence
// time, from restart) and then once more relStability later; a run whose
// invariants never hold returns the violations at relLimit, and -1.
// onLook, if not nil, sees each look until then.
func relConvergence(ctx context.Context, rt runtimeLister, a agent, want map[string]bool, restart time.Time, label string, onLook func(time.Time, []violation)) (relEnd, float64, error) {
	last := time.Now()
	for {
		snap, at, err := relLook(ctx, rt, a)
		if err != nil {
			return relEnd{}, 0, err
		}
		vs, left := checkInvariants(snap, want)
		if onLook != nil {
			onLook(at, vs)
		}
		if len(vs) == 0 {
			conv := at.Sub(restart).Seconds()
			progress("%s: converged %.2fs after the restart", label, conv)
			if err := sleep(ctx, relStability); err != nil {
				return relEnd{}, 0, err
			}
			snap, _, err := relLook(ctx, rt, a)
			if err != nil {
				return relEnd{}, 0, err
			}
			vs, left := checkInvariants(snap, want)
			return relEnd{vs, left, fmt.Sprintf("%s after converging", relStability)}, conv, nil
		}
		if time.Since(restart) > relLimit {
			return relEnd{vs, left, relLimit.String()}, -1, nil
		}
		if time.Since(last) >= 2*time.Second {
			progress("%s: %d violations, e.g. %s", label, len(vs), vs[0])
			last = time.Now()
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return relEnd{}, 0, err
		}
	}
}

// untilRuntime polls the runtime every 10 ms until done says so: the kill
// must land close to its moment, and a listing costs the agent nothing.
func untilRuntime(ctx context.Context, rt *cri.Client, a agent, label string, done func(ready, running int) bool) error {
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ready, running, err := runtimeCounts(ctx, rt)
		if err != nil {
			return err
		}
		if done(ready, running) {
			return nil
		}
		if a.exited() {
			return a.errExited()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: the kill's moment never came: %d sandboxes ready, %d containers running", label, ready, running)
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return err
		}
	}
}

// runtimeCounts are the ready sandboxes and running containers.
func runtimeCounts(ctx context.Context, rt *cri.Client) (ready, running int, err error) {
	sbs, err := rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{State: &runtimeapi.PodSandboxStateValue{State: runtimeapi.PodSandboxState_SANDBOX_READY}})
	if err != nil {
		return 0, 0, fmt.Errorf("list sandboxes: %w", err)
	}
	cs, err := rt.ListContainers(ctx, &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}})
	if err != nil {
		return 0, 0, fmt.Errorf("list containers: %w", err)
	}
	return len(sbs), len(cs), nil
}

// isMutation is true for the calls that change the runtime's state: the
// ones a recovery's cost is counted in.
func isMutation(method string) bool {
	switch method {
	case "RunPodSandbox", "StopPodSandbox", "RemovePodSandbox",
		"CreateContainer", "StartContainer", "StopContainer", "RemoveContainer":
		return true
	}
	return false
}
