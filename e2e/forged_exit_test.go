//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// forge makes a process that is pid 1 of a pid namespace of its own
// (unshare: a user namespace, so no capability is needed, then a pid
// namespace, forking into it) and lets it exit with 7: the kernel reports
// that as a pid-1 exit in the container's cgroup. The container itself
// goes on running. The wait first lets podline register the container's
// cgroup with the kernel's filter, as it does once the start returned.
const forge = "sleep 2; unshare -Urpf sh -c 'exit 7'; echo forged $?; while true; do sleep 1; done"

// A container forging its own exit changes nothing: under the kubelet the
// pod stays Running, since it takes container state from the runtime
// alone. podline used to act on the kernel's report at once: the Never
// pod turned Failed and its container was killed (137), the Always pod's
// container would be started again, the init container marked Completed
// while it ran and the app container started beside it.
func TestForgedExitChangesNothing(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("never.yaml", pod("forge-never", "Never", forge))
	a.writeManifest("always.yaml", pod("forge-always", "Always", forge))
	a.writeManifest("init.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: forge-init
spec:
  restartPolicy: Always
  terminationGracePeriodSeconds: 5
  initContainers:
  - name: setup
    image: %[1]s
    command: ["sh", "-c", %[2]q]
  containers:
  - name: app
    image: %[1]s
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`, busybox, "trap 'exit 0' TERM; "+forge))

	type watched struct {
		name, container string
		init            bool
	}
	all := []watched{{"forge-never", "app", false}, {"forge-always", "app", false}, {"forge-init", "setup", true}}
	running := func(p *v1.Pod, w watched) *v1.ContainerStatus {
		statuses := p.Status.ContainerStatuses
		if w.init {
			statuses = p.Status.InitContainerStatuses
		}
		for i := range statuses {
			if statuses[i].Name == w.container && statuses[i].State.Running != nil {
				return &statuses[i]
			}
		}
		return nil
	}
	// Each container runs and has forged its exit (its log says so).
	first := map[string]v1.ContainerStatus{}
	for _, w := range all {
		p := a.waitPod(w.name, "running its container", 60*time.Second, func(p *v1.Pod) bool { return running(p, w) != nil })
		first[w.name] = *running(p, w)
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(a.readLog(p, w.container, 0), "forged") {
			if time.Now().After(deadline) {
				t.Fatalf("%s: no forged exit in the log: %q", w.name, a.readLog(p, w.container, 0))
			}
			time.Sleep(50 * time.Millisecond)
		}
		if log := a.readLog(p, w.container, 0); !strings.Contains(log, "forged 7") {
			t.Fatalf("%s: unshare did not run a pid-1 process that exited 7: %q", w.name, log)
		}
	}
	if n := a.metric("podline_pleg_kernel_exits_total"); n < 3 {
		t.Fatalf("the kernel reported %v exits, want the 3 forged ones: the test proves nothing without them", n)
	}

	// The rounds of looks at the runtime end about 4 s after each report;
	// all that time and some, nothing may move.
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) {
		pods, err := a.pods()
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range all {
			var p *v1.Pod
			for i := range pods {
				if pods[i].Name == w.name+"-"+nodeName {
					p = &pods[i]
				}
			}
			if p == nil {
				t.Fatalf("%s gone from /pods", w.name)
			}
			cs := running(p, w)
			switch {
			case cs == nil:
				t.Fatalf("%s: %s no longer running after its forged exit: %s", w.name, w.container, describe(p))
			case cs.ContainerID != first[w.name].ContainerID || cs.RestartCount != 0 || !cs.State.Running.StartedAt.Equal(&first[w.name].State.Running.StartedAt):
				t.Fatalf("%s: %s replaced or restarted: %s", w.name, w.container, describe(p))
			case w.init && (p.Status.Phase != v1.PodPending || p.Status.ContainerStatuses[0].State.Waiting == nil):
				t.Fatalf("%s: the app container left waiting while its init container runs: %s", w.name, describe(p))
			case !w.init && p.Status.Phase != v1.PodRunning:
				t.Fatalf("%s: phase %s after a forged exit", w.name, p.Status.Phase)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n := a.metric("podline_pleg_kernel_exits_dropped_total"); n < 3 {
		t.Fatalf("%v kernel exits dropped, want the 3 forged ones", n)
	}
}
