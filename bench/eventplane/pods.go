package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/podline/podline/bench/internal/observe"
)

// namePrefix marks the bench's pods; the last-resort cleanup removes no
// sandbox without it (or a UID the bench saw).
const namePrefix = "evb-"

const busybox = "docker.io/library/busybox:1.36"

// manifest is a pod that runs until killed. sleep as PID 1 ignores
// SIGTERM, so a grace period of one second keeps teardown short; host
// network keeps starts fast (no CNI).
func manifest(name string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  restartPolicy: Never
  hostNetwork: true
  terminationGracePeriodSeconds: 1
  containers:
  - name: app
    image: %s
    command: ["sleep", "3600"]
`, name, busybox)
}

// writePods writes n manifests named <prefix><scenario>-NNN at once and
// returns the static pod names podline will give them.
func (a *agent) writePods(scenario string, n int) ([]string, error) {
	names := make([]string, n)
	for i := range n {
		name := fmt.Sprintf("%s%s-%03d", namePrefix, scenario, i)
		// Write then rename, so the watcher never reads half a file.
		tmp := filepath.Join(a.manifests, "."+name+".tmp")
		if err := os.WriteFile(tmp, []byte(manifest(name)), 0o644); err != nil {
			return nil, err
		}
		if err := os.Rename(tmp, filepath.Join(a.manifests, name+".yaml")); err != nil {
			return nil, err
		}
		names[i] = name + "-" + nodeName
	}
	return names, nil
}

// waitRunning polls /pods until every named pod runs, printing progress,
// and returns them in the order of names.
func (a *agent) waitRunning(ctx context.Context, names []string, seen func(uid string)) ([]observe.Pod, error) {
	timeout := 60*time.Second + time.Duration(len(names))*time.Second
	start := time.Now()
	lastUp, lastPrint := -1, time.Time{}
	for {
		pods, err := a.pods(ctx)
		if err != nil {
			return nil, err
		}
		byName := map[string]observe.Pod{}
		for _, p := range pods {
			byName[p.Metadata.Name] = p
			if p.Metadata.UID != "" {
				seen(p.Metadata.UID)
			}
		}
		up := 0
		for _, n := range names {
			if p, ok := byName[n]; ok && p.Running() {
				up++
			}
		}
		if up != lastUp && (up == len(names) || time.Since(lastPrint) >= time.Second) {
			progress("%s: %d/%d pods Running after %.1fs", a.label, up, len(names), time.Since(start).Seconds())
			lastUp, lastPrint = up, time.Now()
		}
		if up == len(names) {
			out := make([]observe.Pod, len(names))
			for i, n := range names {
				out[i] = byName[n]
			}
			return out, nil
		}
		if time.Since(start) > timeout {
			return nil, fmt.Errorf("%s: only %d/%d pods Running after %s; podline log: %s", a.label, up, len(names), timeout, a.logPath)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-a.done:
			return nil, fmt.Errorf("%s: podline exited; log: %s", a.label, a.logPath)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// removePods deletes every manifest and waits until /pods is empty and
// the runtime holds none of the bench's sandboxes.
func (b *bench) removePods(ctx context.Context, a *agent) error {
	entries, err := os.ReadDir(a.manifests)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.Remove(filepath.Join(a.manifests, e.Name())); err != nil {
			return err
		}
	}
	start := time.Now()
	lastPrint := start
	// Teardown is never cut short by an interrupt: it is what leaves the
	// runtime clean.
	ctx = context.WithoutCancel(ctx)
	for {
		pods, err := a.pods(ctx)
		if err != nil {
			return fmt.Errorf("%s: teardown: %w", a.label, err)
		}
		left, err := b.ourSandboxes(ctx)
		if err != nil {
			return err
		}
		if len(pods) == 0 && len(left) == 0 {
			progress("%s: all pods removed in %.1fs", a.label, time.Since(start).Seconds())
			return nil
		}
		if time.Since(lastPrint) >= 2*time.Second {
			progress("%s: removing: %d pods in /pods, %d sandboxes in the runtime", a.label, len(pods), len(left))
			lastPrint = time.Now()
		}
		if time.Since(start) > 90*time.Second {
			return fmt.Errorf("%s: %d pods and %d sandboxes left 90s after their manifests were removed", a.label, len(pods), len(left))
		}
		select {
		case <-a.done:
			return fmt.Errorf("%s: podline exited during teardown; log: %s", a.label, a.logPath)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// teardown removes the scenario's pods, stops its podline and, when
// podline failed to remove them, removes what is left through the CRI.
func (b *bench) teardown(ctx context.Context, a *agent) error {
	err := b.removePods(ctx, a)
	a.stop()
	if err != nil {
		b.removeLeftovers(ctx)
	}
	return err
}
