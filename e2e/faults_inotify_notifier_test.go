//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// podline started at the inotify instance limit has no cgroup notifier;
// once an instance is free it makes one (it tries every 10 s), and the new
// notifier watches the cgroups of what already runs: the exit of a pod
// started before it is reported by it.
func TestFaultInotifyInstanceLimitNotifierReturns(t *testing.T) {
	restore := setSysctl(t, "fs/inotify/max_user_instances", "1")
	a := startAgent(t)
	a.writeManifest("early.yaml", pod("early", "Never", "while true; do sleep 1; done"))
	p := a.waitRunning("early", 30*time.Second)
	if !strings.Contains(a.out.String(), "cgroup notification source unavailable; the other sources carry on, and podline tries again") {
		t.Fatalf("podline did not say the cgroup notifier is off and retried:\n%s", a.out.String())
	}

	restore()
	freed := time.Now()
	eventually(t, 15*time.Second, "the cgroup notifier came back and watches the running pod", func() (bool, string) {
		watched := a.metric("podline_cgroup_notify_watched_cgroups")
		return strings.Contains(a.out.String(), "cgroup notification source available") && watched >= 2,
			fmt.Sprintf("watched cgroups %v", watched)
	})
	t.Logf("instances free → cgroup notifier made, watching %v cgroups, after %s", a.metric("podline_cgroup_notify_watched_cgroups"), time.Since(freed))

	emptied := a.metric(`podline_cgroup_notifications_total{kind="emptied"}`)
	killed := time.Now()
	a.killMain(p)
	p = a.waitPod("early", "Failed", 5*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	expectExit(t, p, 137)
	eventually(t, 2*time.Second, "the late notifier reported the exit", func() (bool, string) {
		n := a.metric(`podline_cgroup_notifications_total{kind="emptied"}`)
		return n > emptied, fmt.Sprintf("emptied notifications %v (%v before the kill)", n, emptied)
	})
	t.Logf("SIGKILL of a pod older than the notifier → Failed in /pods after %s, reported by the notifier too", time.Since(killed))
}
