package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

// relHangStatus: N pods Running, then one pod's container's
// ContainerStatus hangs while that container and another pod's exit.
// podline learns of an exit from the runtime's events and asks for the
// container's status; the case shows whether one stuck answer holds up
// the other pod's restart, and what the stuck pod shows meanwhile.
func (s *suite) relHangStatus(ctx context.Context, r *relRun, label string) error {
	hungPod := fmt.Sprintf("bench-%05d-%s", r.Pods/2, nodeName)
	ctlPod := fmt.Sprintf("bench-%05d-%s", 0, nodeName)
	r.Invariant = fmt.Sprintf("fakecri --hang ContainerStatus=%s/app, podline --runtime-request-timeout %s; with every pod Running, the containers of %s and %s exit (code 1): "+
		"%s is restarted (restartCount 1, Running) while %s's status call is stuck, and the other pods stay Running; %s's status is reported as observed",
		hungPod, relRequestTimeout, hungPod, ctlPod, ctlPod, hungPod, hungPod)
	env, err := s.relStart(ctx, label, []string{"--hang", "ContainerStatus=" + hungPod + "/app"}, "--runtime-request-timeout", relRequestTimeout.String())
	if err != nil {
		return err
	}
	defer env.close(label)
	names, err := env.write(r.Pods)
	if err != nil {
		return err
	}
	if err := newWatcher(env.a, r.Pods).allRunning(ctx, label, names, 2*time.Minute); err != nil {
		return err
	}
	hung0, err := fakeHung(ctx, env.control)
	if err != nil {
		return err
	}
	ids, err := benchContainers(ctx, env.rt)
	if err != nil {
		return err
	}
	exited := time.Now()
	for _, pod := range []string{hungPod, ctlPod} {
		if err := fakeExit(ctx, env.control, ids[pod], 1); err != nil {
			return fmt.Errorf("make %s's container exit: %w", pod, err)
		}
	}
	r.Figures = map[string]float64{}
	restarted := func() (bool, error) {
		pods, err := fullPods(ctx, env.a)
		if err != nil {
			return false, err
		}
		i := slices.IndexFunc(pods, func(p v1.Pod) bool { return p.Name == ctlPod })
		return i >= 0 && podRunning(&pods[i]) && pods[i].Status.ContainerStatuses[0].RestartCount >= 1, nil
	}
	r.Figures["other_restarted_sec"] = -1
	for time.Since(exited) < relHangWatch {
		ok, err := restarted()
		if err != nil {
			return err
		}
		if ok {
			r.Figures["other_restarted_sec"] = time.Since(exited).Seconds()
			break
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
	// The stuck pod is given two request timeouts to show what it shows.
	if err := sleep(ctx, max(0, 2*relRequestTimeout+time.Second-time.Since(exited))); err != nil {
		return err
	}
	pods, err := fullPods(ctx, env.a)
	if err != nil {
		return err
	}
	running := 0
	r.Observed = map[string]string{"healthz": healthz(ctx, env.healthzPort)}
	for i := range pods {
		p := &pods[i]
		if p.Name == hungPod {
			r.Observed["status"] = podStatusText(p)
			if len(p.Status.ContainerStatuses) > 0 {
				r.Figures["stuck_pod_restart_count"] = float64(p.Status.ContainerStatuses[0].RestartCount)
			}
		} else if podRunning(p) {
			running++
		}
	}
	hung1, err := fakeHung(ctx, env.control)
	if err != nil {
		return err
	}
	r.Figures["hung_calls"] = float64(hung1 - hung0)
	r.Figures["others_running_at_end"] = float64(running)
	r.Observed["log"] = strings.Join(logLinesWith(env.a.logPath, hungPod, 3), "\n")
	switch {
	case hung1 == hung0:
		r.Pass = true
		r.Verdict = fmt.Sprintf("podline never asked for the stuck container's status (0 hung calls): the exit was taken from the event alone; %s restarted in %.1fs", ctlPod, r.Figures["other_restarted_sec"])
	case r.Figures["other_restarted_sec"] < 0:
		r.Verdict = fmt.Sprintf("%s was not restarted within %s while %s's status call hung", ctlPod, relHangWatch, hungPod)
	case running != r.Pods-1:
		r.Verdict = fmt.Sprintf("only %d of the other %d pods Running at the end", running, r.Pods-1)
	default:
		r.Pass = true
		r.Verdict = fmt.Sprintf("%s restarted in %.1fs while %s's status call hung (%d hung calls)", ctlPod, r.Figures["other_restarted_sec"], hungPod, hung1-hung0)
	}
	return nil
}

// fakeExit makes the fake's container id exit with code.
func fakeExit(ctx context.Context, sock, id string, code int) error {
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://fakecri/exit?container=%s&code=%d", id, code), nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("fake CRI /exit %s: %s", id, resp.Status)
	}
	return nil
}
