package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
)

// relLook takes one snapshot of both sides: the runtime first, then
// /pods, and returns when /pods answered, the later of the two looks.
func relLook(ctx context.Context, rt runtimeLister, a agent) (relSnapshot, time.Time, error) {
	var s relSnapshot
	var err error
	if s.sandboxes, err = rt.ListPodSandbox(ctx, nil); err != nil {
		return s, time.Time{}, fmt.Errorf("list sandboxes: %w", err)
	}
	if s.containers, err = rt.ListContainers(ctx, nil); err != nil {
		return s, time.Time{}, fmt.Errorf("list containers: %w", err)
	}
	s.pods, err = fullPods(ctx, a)
	if err != nil && a.exited() {
		return s, time.Time{}, a.errExited()
	}
	return s, time.Now(), err
}

// fullPods is GET /pods decoded whole: the invariants read restart counts
// and the specs' containers, which observe.Pod leaves out.
func fullPods(ctx context.Context, a agent) ([]v1.Pod, error) {
	body, err := a.client().Get(ctx, "/pods")
	if err != nil {
		return nil, err
	}
	defer body.Close()
	var list v1.PodList
	if err := json.NewDecoder(body).Decode(&list); err != nil {
		return nil, fmt.Errorf("/pods: %w", err)
	}
	return list.Items, nil
}

// podStatusText is everything a pod's status says about why it is not
// running, in one line: phase, reason and message, the conditions that
// are not true, and each container's waiting or terminated state.
func podStatusText(p *v1.Pod) string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s", p.Status.Phase)
	if p.Status.Reason != "" || p.Status.Message != "" {
		fmt.Fprintf(&b, " reason=%q message=%q", p.Status.Reason, p.Status.Message)
	}
	for _, c := range p.Status.Conditions {
		if c.Status != v1.ConditionTrue {
			fmt.Fprintf(&b, "; %s=%s", c.Type, c.Status)
			if c.Reason != "" || c.Message != "" {
				fmt.Fprintf(&b, " (%s: %s)", c.Reason, c.Message)
			}
		}
	}
	for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		switch {
		case cs.State.Waiting != nil:
			fmt.Fprintf(&b, "; container %s waiting reason=%q message=%q", cs.Name, cs.State.Waiting.Reason, cs.State.Waiting.Message)
		case cs.State.Terminated != nil:
			fmt.Fprintf(&b, "; container %s terminated reason=%q message=%q", cs.Name, cs.State.Terminated.Reason, cs.State.Terminated.Message)
		case cs.State.Running != nil:
			fmt.Fprintf(&b, "; container %s running", cs.Name)
		default:
			fmt.Fprintf(&b, "; container %s: no state", cs.Name)
		}
	}
	return b.String()
}

// healthz is GET /healthz?verbose on port: the status line and body.
func healthz(ctx context.Context, port int) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/healthz?verbose", port), nil)
	if err != nil {
		return err.Error()
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "no answer: " + err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return fmt.Sprintf("%s: %s", resp.Status, strings.Join(strings.Fields(string(body)), " "))
}

// keepLogs copies a failed run's logs out of its directory, which the run
// removes, and returns where they went.
func keepLogs(dir string) string {
	dst, err := os.MkdirTemp("", "podline-reliability-")
	if err != nil {
		return "(not kept: " + err.Error() + ")"
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		if b, err := os.ReadFile(l); err == nil {
			os.WriteFile(filepath.Join(dst, filepath.Base(l)), b, 0o644)
		}
	}
	return dst
}

// logLinesWith are the lines of the log at path that contain s, the last n.
func logLinesWith(path, s string, n int) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out[max(0, len(out)-n):]
}
