package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/podline/podline/cri"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// relContainerd: N pods Running on the harness containerd, which is then
// stopped (SIGTERM, or SIGKILL with kill) and started again while podline
// runs on; during the outage some manifests go and new ones come, so that
// podline has work waiting for the runtime. The shims keep the containers
// running through it. Invariants as in the kill cases, on the suite's
// pods only, and the pods that stayed keep their container ids.
func (s *suite) relContainerd(ctx context.Context, kill bool, r *relRun, label string) error {
	r.Runtime = real
	r.Invariant = "containerd down and up again under podline: podline reconnects; the pods that stayed keep their containers (same ids, restart count 0); " +
		"the pods removed during the outage are gone and those added run; no duplicate, lost or orphaned sandbox or container; " +
		fmt.Sprintf("converged within %s of containerd answering again", relConverge)
	pid, err := readPID(s.cfg.containerdP)
	if err != nil {
		return fmt.Errorf("the containerd cases need the harness containerd (make reliability runs under scripts/with-runtime.sh): %w", err)
	}
	rt, err := cri.Dial(ctx, "unix://"+s.cfg.endpoint, "", 30*time.Second)
	if err != nil {
		return err
	}
	defer rt.Close()
	dir, err := os.MkdirTemp(s.tmp, "rel-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	a, err := startPodline(ctx, s.podline, dir, "unix://"+s.cfg.endpoint, key(podline, dflt, real, r.Pods))
	if err != nil {
		return err
	}
	defer release(a, label)
	w := newPodWriter(a.manifests())
	// Runs before release: the run's pods leave the runtime, whatever
	// happened, so that the next run finds it as empty as this one did.
	defer relEmpty(context.WithoutCancel(ctx), rt, a, w, label)
	if err := sleep(ctx, min(3*time.Second, s.settle())); err != nil {
		return err
	}
	want := map[string]bool{}
	var names []string
	for i := range r.Pods {
		name, err := w.add(fmt.Sprintf("bench-%05d", i))
		if err != nil {
			return err
		}
		want[name], names = true, append(names, name)
	}
	if err := newWatcher(a, r.Pods).allRunning(ctx, label, names, 3*time.Minute); err != nil {
		return err
	}
	before, err := benchContainers(ctx, rt)
	if err != nil {
		return err
	}
	m0, err := readMetrics(ctx, a)
	if err != nil {
		return err
	}
	ids, err := benchIDs(ctx, rt, before)
	if err != nil {
		return err
	}

	churn := max(1, r.Pods/10)
	down := time.Now()
	// Once stopped, containerd is started again even if the suite is
	// interrupted meanwhile: it is the harness's, not the case's.
	ctx, outer := context.WithoutCancel(ctx), ctx
	argv, env, logPath, err := stopContainerd(ctx, pid, kill)
	if err != nil {
		return err
	}
	// The breakdown reads containerd's log from here on.
	logFrom := int64(0)
	if fi, err := os.Stat(logPath); err == nil {
		logFrom = fi.Size()
	}
	// The outage's work: the oldest manifests go, new ones come.
	removed, added := slices.Clone(names[:churn]), []string{}
	for range churn {
		delete(want, names[0])
		names = names[1:]
		if err := w.removeOldest(); err != nil {
			return err
		}
	}
	for i := range churn {
		name, err := w.add(fmt.Sprintf("bench-%05d", r.Pods+i))
		if err != nil {
			return err
		}
		want[name], added = true, append(added, name)
	}
	up, err := startContainerd(ctx, rt, s.cfg.endpoint, argv, env, logPath, s.cfg.containerdP)
	if err != nil {
		return err
	}
	ctx = outer
	r.Figures = map[string]float64{"containerd_down_sec": up.Sub(down).Seconds()}
	progress("%s: containerd down %.1fs (%s), %d manifests removed and %d written meanwhile", label, r.Figures["containerd_down_sec"], map[bool]string{true: "SIGKILL", false: "SIGTERM"}[kill], churn, churn)

	looks := newConvLooks(added, removed)
	end, conv, err := relConvergence(ctx, &benchOnly{rt}, a, want, up, label, looks.look)
	if err != nil {
		return err
	}
	r.ConvergeSec = conv
	r.Breakdown, err = relBreakdown(newPodTimeline(ids), looks, logPath, logFrom, a.proc.logPath, down, up, added, removed)
	if err != nil {
		// The convergence stands without its breakdown.
		progress("%s: no convergence breakdown: %v", label, err)
	}
	after, err := benchContainers(ctx, rt)
	if err != nil {
		return err
	}
	kept, changed := 0, []string{}
	for pod := range want {
		if id, ok := before[pod]; ok {
			if after[pod] == id {
				kept++
			} else {
				changed = append(changed, fmt.Sprintf("%s: %s → %s", pod, shortID(id), shortID(after[pod])))
			}
		}
	}
	r.Figures["containers_kept"] = float64(kept)
	m1, err := readMetrics(ctx, a)
	if err != nil {
		return err
	}
	// Events of the pods started after containerd came back show the
	// stream resumed; the discrepancies are what the relist found the
	// events had missed.
	for _, name := range []string{"podline_pleg_cri_events_reconnects_total", "podline_pleg_relist_discrepancies_total",
		`podline_pleg_cri_events_received_total{type="started"}`,
		"podline_pleg_relist_errors_total", `podline_cri_errors_total{class="unavailable"}`, "podline_pipeline_runtime_back_passes_total"} {
		r.Figures[name] = m1.samples[name] - m0.samples[name]
	}
	// The start gate's limit when containerd went: how many of the pods
	// added meanwhile start at once when it is back.
	r.Figures["podline_start_limit at the outage"] = m0.samples["podline_start_limit"]
	r.Left, r.Violations = end.left, byInvariant(end.vs)
	for _, v := range end.vs[:min(len(end.vs), 10)] {
		r.ViolationSamples = append(r.ViolationSamples, v.String())
	}
	for _, c := range changed[:min(len(changed), 10)] {
		r.ViolationSamples = append(r.ViolationSamples, "container replaced: "+c)
	}
	switch {
	case len(end.vs) > 0 || len(changed) > 0:
		r.Verdict = fmt.Sprintf("%d violation(s) %s after containerd came back, %d container(s) replaced; logs kept in %s", len(end.vs), end.when, len(changed), keepLogs(dir))
	case conv > relConverge.Seconds():
		r.Verdict = fmt.Sprintf("invariants hold, but only %.1fs after containerd came back (target %s)", conv, relConverge)
	default:
		r.Pass = true
		r.Verdict = fmt.Sprintf("every invariant holds %.2fs after containerd came back; %d of %d containers kept", conv, kept, len(want)-churn)
	}
	return nil
}

// stopContainerd stops the containerd pid and returns what starts it
// again as it was: its command line, environment and log file.
func stopContainerd(ctx context.Context, pid int, kill bool) (argv, env []string, logPath string, err error) {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return nil, nil, "", err
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		return nil, nil, "", err
	}
	logPath, err = os.Readlink(fmt.Sprintf("/proc/%d/fd/2", pid))
	if err != nil {
		return nil, nil, "", err
	}
	argv = strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	env = slices.DeleteFunc(strings.Split(string(bytes.TrimRight(environ, "\x00")), "\x00"), func(e string) bool { return e == "" })
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if err := syscall.Kill(pid, sig); err != nil {
		return nil, nil, "", fmt.Errorf("signal containerd %d: %w", pid, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			return argv, env, logPath, nil
		}
		if time.Now().After(deadline) {
			return nil, nil, "", fmt.Errorf("containerd %d still there 30s after %v", pid, sig)
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return nil, nil, "", err
		}
	}
}

// startContainerd starts containerd as scripts/runtime.sh does (a session
// of its own, so that it outlives the suite; its log appended to) and
// waits until its CRI answers, on a connection of its own and then on rt;
// the pid file then names the new process. up is when it first answered.
func startContainerd(ctx context.Context, rt *cri.Client, endpoint string, argv, env []string, logPath, pidFile string) (up time.Time, err error) {
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return up, err
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return up, fmt.Errorf("start containerd again: %w", err)
	}
	pid := cmd.Process.Pid
	// Reaped when it ends: a containerd the next case kills must leave
	// no zombie behind, which /proc would still show.
	go cmd.Wait()
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		return up, err
	}
	deadline := time.Now().Add(60 * time.Second)
	// A new connection for each look: rt reconnects on gRPC's back-off
	// (up to 2 s), which dated containerd's return up to that much late.
	// rt must answer too: the invariants are read through it.
	for _, list := range []func() error{func() error { return answers(ctx, endpoint) }, func() error {
		_, err := rt.ListPodSandbox(ctx, nil)
		return err
	}} {
		for {
			err := list()
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return up, fmt.Errorf("containerd %d not answering 60s after its start: %w", pid, err)
			}
			if err := sleep(ctx, 20*time.Millisecond); err != nil {
				return up, err
			}
		}
		if up.IsZero() {
			up = time.Now()
		}
	}
	return up, nil
}

// answers lists the sandboxes of the runtime at endpoint on a connection
// of its own.
func answers(ctx context.Context, endpoint string) error {
	c, err := cri.Dial(ctx, "unix://"+endpoint, "", time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.ListPodSandbox(ctx, nil)
	return err
}

// benchContainers maps each of the suite's pods to its running container.
func benchContainers(ctx context.Context, rt *cri.Client) (map[string]string, error) {
	cs, err := (&benchOnly{rt}).ListContainers(ctx, &runtimeapi.ContainerFilter{State: &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING}})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, c := range cs {
		out[c.Labels[cri.LabelPodName]] = c.Id
	}
	return out, nil
}

// benchIDs maps the ids of the suite's sandboxes, and of the running
// containers in byPod, to their pod.
func benchIDs(ctx context.Context, rt *cri.Client, byPod map[string]string) (map[string]string, error) {
	sbs, err := (&benchOnly{rt}).ListPodSandbox(ctx, nil)
	if err != nil {
		return nil, err
	}
	ids := map[string]string{}
	for _, sb := range sbs {
		ids[sb.Id] = sb.GetMetadata().GetName()
	}
	for pod, id := range byPod {
		ids[id] = pod
	}
	return ids, nil
}

// runtimeLister is what the invariants read from a runtime.
type runtimeLister interface {
	ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error)
	ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error)
}

// benchOnly lists the suite's pods alone (named "bench-*"): the harness
// containerd is shared, and what others run there is not the case's.
type benchOnly struct{ rt *cri.Client }

func (b *benchOnly) ListPodSandbox(ctx context.Context, f *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	sbs, err := b.rt.ListPodSandbox(ctx, f)
	return slices.DeleteFunc(sbs, func(sb *runtimeapi.PodSandbox) bool {
		return !strings.HasPrefix(sb.GetMetadata().GetName(), "bench-")
	}), err
}

func (b *benchOnly) ListContainers(ctx context.Context, f *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	cs, err := b.rt.ListContainers(ctx, f)
	return slices.DeleteFunc(cs, func(c *runtimeapi.Container) bool {
		return !strings.HasPrefix(c.Labels[cri.LabelPodName], "bench-")
	}), err
}

// relEmpty removes every manifest and waits for podline to take the
// suite's pods out of the runtime; what is left after two minutes the
// suite removes itself.
func relEmpty(ctx context.Context, rt *cri.Client, a agent, w *podWriter, label string) {
	if err := w.removeAll(); err != nil {
		progress("%s: remove manifests: %v", label, err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, left, err := benchSandboxes(ctx, rt)
		if err == nil && len(left) == 0 {
			return
		}
		if err != nil || a.exited() || time.Now().After(deadline) {
			progress("%s: %d sandboxes left (%v); removing them", label, len(left), err)
			if err := removeSandboxes(ctx, rt, left); err != nil {
				progress("%s: removing the sandboxes left: %v", label, err)
			}
			return
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			return
		}
	}
}
