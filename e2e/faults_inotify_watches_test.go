//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// At the inotify watch limit podline cannot watch a new container's
// cgroup: the cgroup notifier polls it instead, says so in its log and
// metrics, and the container's exit is still seen within a poll period —
// with the cgroup notifier as the only source, so nothing else could
// report it. The runtime removes an exited container's cgroup within
// milliseconds, before the next poll: the poll must take a cgroup gone as
// one emptied. Once watches are free the cgroups go back to inotify.
func TestFaultInotifyWatchLimit(t *testing.T) {
	a := startAgent(t, "--pleg=events", "--pleg-sources=cgroup", "--relist-period=1h")
	refusedBefore := a.metric("podline_cgroup_notify_watch_limit_total")

	// No watch left for anyone of this user (root): the count moves as
	// other processes come and go, so the limit is what is in use now.
	inUse := inotifyWatchesInUse(t)
	restore := setSysctl(t, "fs/inotify/max_user_watches", strconv.Itoa(inUse))
	t.Logf("inotify watches in use: %d; max_user_watches set to that", inUse)

	a.writeManifest("limited.yaml", pod("limited", "Never", "while true; do sleep 1; done"))
	p := a.waitRunning("limited", 30*time.Second)
	eventually(t, 5*time.Second, "podline polls the cgroups it cannot watch", func() (bool, string) {
		refused, polled := a.metric("podline_cgroup_notify_watch_limit_total"), a.metric("podline_cgroup_notify_polled_cgroups")
		return refused > refusedBefore && polled >= 1, fmt.Sprintf("refused watches %v (%v before), polled cgroups %v", refused, refusedBefore, polled)
	})
	if !strings.Contains(a.out.String(), "inotify watch limit reached") {
		t.Errorf("no log line for the watch limit:\n%s", a.out.String())
	}
	t.Logf("at the limit: refused watches %v, polled cgroups %v", a.metric("podline_cgroup_notify_watch_limit_total"), a.metric("podline_cgroup_notify_polled_cgroups"))

	killed := time.Now()
	a.killMain(p)
	p = a.waitPod("limited", "Failed", 5*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	t.Logf("SIGKILL → Failed in /pods at the watch limit (cgroup source alone, poll period 1s): %s", time.Since(killed))
	expectExit(t, p, 137)

	restore()
	freed := time.Now()
	a.removeManifest("limited.yaml")
	a.writeManifest("after.yaml", pod("after", "Never", "while true; do sleep 1; done"))
	p = a.waitRunning("after", 30*time.Second)
	eventually(t, 5*time.Second, "the cgroups went back to inotify", func() (bool, string) {
		polled := a.metric("podline_cgroup_notify_polled_cgroups")
		return polled == 0, fmt.Sprintf("polled cgroups %v", polled)
	})
	t.Logf("watches free → nothing polled after %s", time.Since(freed))
	killed = time.Now()
	a.killMain(p)
	p = a.waitPod("after", "Failed", 5*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
	t.Logf("SIGKILL → Failed in /pods after the limit was raised: %s", time.Since(killed))
	expectExit(t, p, 137)
	select {
	case <-a.done:
		t.Fatalf("podline exited:\n%s", a.out.String())
	default:
	}
}

// inotifyWatchesInUse counts the inotify watches every process holds (the
// tests run as root, as does everything that counts against root's
// limit here).
func inotifyWatchesInUse(t *testing.T) int {
	t.Helper()
	procs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		fdDir := filepath.Join("/proc", p.Name(), "fd")
		fds, _ := os.ReadDir(fdDir)
		for _, fd := range fds {
			if target, _ := os.Readlink(filepath.Join(fdDir, fd.Name())); target != "anon_inode:inotify" {
				continue
			}
			info, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "fdinfo", fd.Name()))
			total += strings.Count(string(info), "inotify wd:")
		}
	}
	return total
}
