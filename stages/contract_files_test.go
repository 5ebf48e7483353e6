package stages_test

import (
	"os"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/podspec"
)

// A container's termination log is made before it is created and what it
// wrote there is its terminated message, once, through the whole pipeline.
func TestTerminationMessageThroughThePipeline(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	pod := testPod("msg", func(p *v1.Pod) {
		p.Spec.RestartPolicy = v1.RestartPolicyNever
		p.Spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
	})
	h.pipe.Upsert(pod)
	st := h.waitRunning(pod.UID)
	id := strings.TrimPrefix(st.ContainerStatuses[0].ContainerID, "fake://")
	file := podspec.TerminationLogPath(h.node, pod.UID, "app", 0)
	if err := os.WriteFile(file, []byte("bye"), 0); err != nil {
		t.Fatalf("the container's termination log was not made: %v", err)
	}
	hosts, err := os.ReadFile(podspec.HostsFilePath(h.node, pod.UID))
	if err != nil || !strings.Contains(string(hosts), st.PodIP+"\tmsg\n") {
		t.Errorf("hosts file %q (%v), want the pod IP %s mapped to its name", hosts, err, st.PodIP)
	}
	if err := h.fake.ExitContainer(id, 3); err != nil {
		t.Fatal(err)
	}
	st = h.waitFor(pod.UID, "Failed", func(st v1.PodStatus) bool { return st.Phase == v1.PodFailed })
	term := st.ContainerStatuses[0].State.Terminated
	if term == nil || term.ExitCode != 3 || term.Message != "bye" {
		t.Fatalf("terminated = %+v, want exit code 3 and message \"bye\"", term)
	}
}

// A sandbox whose FQDN the kernel cannot hold is never created.
func TestSandboxRefusedForALongFQDN(t *testing.T) {
	log := &eventLog{}
	h := newHarness(t, harnessOpts{events: log})
	pod := testPod("fqdn", func(p *v1.Pod) {
		p.Spec.Hostname, p.Spec.Subdomain = strings.Repeat("h", 50), "sub"
		yes := true
		p.Spec.SetHostnameAsFQDN = &yes
	})
	h.pipe.Upsert(pod)
	log.wait(t, "FailedCreatePodSandBox", "Failed to create pod sandbox: failed to construct FQDN", "is too long")
	if n := h.fake.Calls("RunPodSandbox"); n != 0 {
		t.Errorf("RunPodSandbox called %d times", n)
	}
}

// A pod asking for a RuntimeClass or a user namespace of its own is not
// run in the default runtime, in the host's user namespace, without them.
func TestSandboxRefusedForIsolationNotGiven(t *testing.T) {
	for _, c := range []struct {
		name string
		set  func(*v1.Pod)
		want string
	}{
		{"runtimeclass", func(p *v1.Pod) { rc := "gvisor"; p.Spec.RuntimeClassName = &rc }, `spec.runtimeClassName "gvisor"`},
		{"userns", func(p *v1.Pod) { no := false; p.Spec.HostUsers = &no }, "spec.hostUsers: false"},
	} {
		t.Run(c.name, func(t *testing.T) {
			log := &eventLog{}
			h := newHarness(t, harnessOpts{events: log})
			h.pipe.Upsert(testPod(c.name, c.set))
			log.wait(t, "FailedCreatePodSandBox", "Failed to create pod sandbox:", c.want)
			if n := h.fake.Calls("RunPodSandbox"); n != 0 {
				t.Errorf("RunPodSandbox called %d times", n)
			}
		})
	}
}
