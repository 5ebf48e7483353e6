//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
)

// TestStaticEditWaitsForOldPod edits the manifest of a host-network pod
// that holds a TCP port and takes about 2 s to let it go: the new version
// must start only once the old one has terminated, or its server finds the
// port taken and crashes (what two versions of a kubeadm etcd or
// kube-apiserver would do).
func TestStaticEditWaitsForOldPod(t *testing.T) {
	a := startAgent(t)
	port := freePort(t)
	manifest := func(version int) string {
		// httpd binds at once and exits when the port is taken; the trap
		// keeps the port for 2 s after TERM.
		script := fmt.Sprintf("echo version %d; httpd -f -p %d & pid=$!; "+
			"trap 'sleep 2; kill $pid; exit 0' TERM; wait $pid; exit 1", version, port)
		return pod("static-edit", "Always", script, "  hostNetwork: true")
	}
	a.writeManifest("edit.yaml", manifest(1))
	old := a.waitRunning("static-edit", 30*time.Second)
	waitListening(t, port, 10*time.Second)
	oldID := strings.TrimPrefix(old.Status.ContainerStatuses[0].ContainerID, "containerd://")

	w := watchPodName(t, "static-edit-"+nodeName)
	edited := time.Now()
	a.writeManifest("edit.yaml", manifest(2))
	p := a.waitPod("static-edit", "the new version Running", 60*time.Second, func(p *v1.Pod) bool {
		return p.UID != old.UID && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Running != nil
	})
	t.Logf("manifest edited → new version Running: %s", time.Since(edited))
	waitUIDGone(t, a, string(old.UID), 30*time.Second)
	// A server that found the port taken exits at once: give it the time
	// to show as a restart.
	time.Sleep(3 * time.Second)
	obs := w.stop()

	p = a.waitPod("static-edit", "listed", time.Second, func(q *v1.Pod) bool { return q.UID == p.UID })
	cs := p.Status.ContainerStatuses[0]
	if cs.RestartCount != 0 || cs.State.Running == nil {
		t.Errorf("new container restarted %d times, state %+v: it did not get the port on its first try",
			cs.RestartCount, cs.State)
	}
	if obs.maxSandboxes > 1 {
		t.Errorf("%d sandboxes of the pod existed at once during the switch (%s); want one at a time",
			obs.maxSandboxes, obs.maxAt.Sub(edited).Round(time.Millisecond))
	}
	newID := strings.TrimPrefix(cs.ContainerID, "containerd://")
	st, err := runtime.ContainerStatus(context.Background(), newID)
	if err != nil {
		t.Fatal(err)
	}
	started := time.Unix(0, st.StartedAt)
	// The old container was last seen running in a listing begun at
	// lastRunning: a start before that overlapped it.
	if last, ok := obs.lastRunning[oldID]; !ok {
		t.Errorf("the watch never saw the old container %s running", oldID)
	} else if started.Before(last) {
		t.Errorf("new container started %s before the old one was last seen running",
			last.Sub(started).Round(time.Millisecond))
	}
	if fin, ok := obs.finished[oldID]; ok && started.Before(fin) {
		t.Errorf("new container started %s before the old one finished", fin.Sub(started).Round(time.Millisecond))
	}
	for id, fin := range obs.finished {
		if id != oldID && id != newID {
			t.Errorf("a container %s of the new version ended at %s (after the edit: %s)", id,
				fin.Format(time.StampMilli), fin.Sub(edited).Round(time.Millisecond))
		}
	}
	t.Logf("old container last seen running %s after the edit, new one started %s after it",
		obs.lastRunning[oldID].Sub(edited).Round(time.Millisecond), started.Sub(edited).Round(time.Millisecond))
	waitListening(t, port, 5*time.Second)
	if !contains(a.out.String(), "static pod waits for the previous pod of its name") {
		t.Errorf("podline's log does not say why the new version waited")
	}
}

// podWatch polls the runtime for one pod name's sandboxes and containers,
// whatever their UID.
type podWatch struct {
	t    *testing.T
	name string
	done chan struct{}
	wg   sync.WaitGroup
	obs  podObservations
}

type podObservations struct {
	maxSandboxes int
	maxAt        time.Time
	// lastRunning is, per container ID, when the last listing that found it
	// running began.
	lastRunning map[string]time.Time
	// finished is, per container ID, the exit time the runtime reported.
	finished map[string]time.Time
}

func watchPodName(t *testing.T, name string) *podWatch {
	w := &podWatch{t: t, name: name, done: make(chan struct{}), obs: podObservations{
		lastRunning: make(map[string]time.Time), finished: make(map[string]time.Time)}}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for {
			w.poll()
			select {
			case <-w.done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { w.stop() })
	return w
}

func (w *podWatch) poll() {
	ctx := context.Background()
	sel := map[string]string{cri.LabelPodName: w.name}
	began := time.Now()
	sbs, err := runtime.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel})
	if err != nil {
		w.t.Error(err)
		return
	}
	if len(sbs) > w.obs.maxSandboxes {
		w.obs.maxSandboxes, w.obs.maxAt = len(sbs), began
	}
	ctrs, err := runtime.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: sel})
	if err != nil {
		w.t.Error(err)
		return
	}
	for _, c := range ctrs {
		switch c.State {
		case runtimeapi.ContainerState_CONTAINER_RUNNING:
			w.obs.lastRunning[c.Id] = began
		case runtimeapi.ContainerState_CONTAINER_EXITED:
			if _, seen := w.obs.finished[c.Id]; seen {
				continue
			}
			if st, err := runtime.ContainerStatus(ctx, c.Id); err == nil && st.FinishedAt > 0 {
				w.obs.finished[c.Id] = time.Unix(0, st.FinishedAt)
			}
		}
	}
}

// stop ends the watch and returns what it saw.
func (w *podWatch) stop() podObservations {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	w.wg.Wait()
	return w.obs
}

// waitUIDGone waits until a pod UID is neither in /pods nor in the
// runtime (waitGone goes by name, which the new version keeps).
func waitUIDGone(t *testing.T, a *agent, uid string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		pods, err := a.pods()
		if err != nil {
			t.Fatal(err)
		}
		listed := false
		for _, p := range pods {
			listed = listed || string(p.UID) == uid
		}
		if !listed && len(runtimePods(t, uid)) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s still present after %s", uid, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitListening waits until something accepts connections on the port.
func waitListening(t *testing.T, port int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nothing listens on port %d: %v", port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
