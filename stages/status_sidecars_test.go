package stages

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/pleg"
)

// sidecarView is what the status says of a pod with sidecars, flattened
// for comparison.
type sidecarView struct {
	Phase                       v1.PodPhase
	Initialized, Ready          bool
	NotInitialized, NotReadyMsg string
	// Init is each init container's started/ready, "-" for unset started:
	// "proxy:started,ready".
	Init []string
}

func viewOf(st v1.PodStatus) sidecarView {
	v := sidecarView{Phase: st.Phase}
	for _, c := range st.Conditions {
		switch c.Type {
		case v1.PodInitialized:
			v.Initialized, v.NotInitialized = c.Status == v1.ConditionTrue, c.Message
		case v1.PodReady:
			v.Ready, v.NotReadyMsg = c.Status == v1.ConditionTrue, c.Message
		}
	}
	for _, cs := range st.InitContainerStatuses {
		s := cs.Name + ":"
		switch {
		case cs.Started == nil:
			s += "-"
		case *cs.Started:
			s += "started"
		default:
			s += "not started"
		}
		if cs.Ready {
			s += ",ready"
		}
		v.Init = append(v.Init, s)
	}
	return v
}

func TestPodStatusSidecars(t *testing.T) {
	at := baseTime.Add(time.Hour)
	sb := sbList(rtReady("sb1", 1))
	f := func(name string, rp v1.RestartPolicy, rt *pleg.Pod, probes ProbeState, waiting map[string]Waiting, want sidecarView) {
		t.Helper()
		pod := unitPod(withRestartPolicy(rp), withInits("proxy", "setup"), withSidecars("proxy"))
		got := viewOf(PodStatus(StatusInput{
			Pod: pod, Runtime: rt, Node: statusNode, RuntimeName: "containerd", Now: statusNow, Probes: probes,
			Sync: &PodSync{FirstSeen: baseTime.Add(time.Hour), Waiting: waiting},
		}))
		if asJSON(got) != asJSON(want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	const always, never, onFailure = v1.RestartPolicyAlways, v1.RestartPolicyNever, v1.RestartPolicyOnFailure
	proxyUp := rtRunning("p1", "sb1", "proxy", 0)
	appUp := rtRunning("a1", "sb1", "app", 0)
	setupDone := rtExited("s1", "sb1", "setup", 0, 0, at)
	exit := func(id, name string, code int32) *pleg.Container { return rtExited(id, "sb1", name, 0, code, at) }
	proxyLoop := map[string]Waiting{"proxy": {Reason: ReasonCrashLoopBackOff}}
	unready := func(names string) string { return "containers with unready status: [" + names + "]" }
	incomplete := func(names string) string { return "containers with incomplete status: [" + names + "]" }

	// Initialization.
	f("sidecar started, init container running: Pending, the sidecar done initializing", always,
		rtPod(sb, rtRunning("s1", "sb1", "setup", 0), proxyUp), nil, nil, sidecarView{
			Phase: v1.PodPending, NotInitialized: incomplete("setup"), NotReadyMsg: unready("app"),
			Init: []string{"proxy:started,ready", "setup:started"},
		})
	f("sidecar running, its startup probe not passed: not started, not ready, not initialized", always,
		rtPod(sb, proxyUp), testProbes{notStarted: []string{"proxy"}}, nil, sidecarView{
			Phase: v1.PodPending, NotInitialized: incomplete("proxy setup"), NotReadyMsg: unready("proxy app"),
			Init: []string{"proxy:not started", "setup:-"},
		})
	f("sidecar started, init container done: Initialized, the app not created yet", always,
		rtPod(sb, setupDone, proxyUp), nil, nil, sidecarView{
			Phase: v1.PodPending, Initialized: true, NotReadyMsg: unready("app"),
			Init: []string{"proxy:started,ready", "setup:not started,ready"},
		})
	f("sidecar crashed during init, pod Never: Pending, not Failed", never,
		rtPod(sb, exit("p1", "proxy", 1)), nil, proxyLoop, sidecarView{
			Phase: v1.PodPending, NotInitialized: incomplete("proxy setup"), NotReadyMsg: unready("proxy app"),
			Init: []string{"proxy:-", "setup:-"},
		})

	// Beside the app: the sidecar's readiness is the pod's.
	f("sidecar and app running and ready", always,
		rtPod(sb, appUp, setupDone, proxyUp), nil, nil, sidecarView{
			Phase: v1.PodRunning, Initialized: true, Ready: true,
			Init: []string{"proxy:started,ready", "setup:not started,ready"},
		})
	f("sidecar's readiness probe not passed: the pod is not ready", always,
		rtPod(sb, appUp, setupDone, proxyUp), testProbes{notReady: []string{"proxy"}}, nil, sidecarView{
			Phase: v1.PodRunning, Initialized: true, NotReadyMsg: unready("proxy"),
			Init: []string{"proxy:started", "setup:not started,ready"},
		})
	f("sidecar in CrashLoopBackOff beside the app: Running, not ready, still initialized", never,
		rtPod(sb, appUp, setupDone, exit("p1", "proxy", 1)), nil, proxyLoop, sidecarView{
			Phase: v1.PodRunning, Initialized: true, NotReadyMsg: unready("proxy"),
			Init: []string{"proxy:-", "setup:not started,ready"},
		})
	f("Always, the app exited, the sidecar runs alone: Running", always,
		rtPod(sb, exit("a1", "app", 0), setupDone, proxyUp), nil, nil, sidecarView{
			Phase: v1.PodRunning, Initialized: true, NotReadyMsg: unready("app"),
			Init: []string{"proxy:started,ready", "setup:not started,ready"},
		})

	// Completion: the app containers decide, not the sidecar's exit.
	f("Never, the app exited 0, the sidecar still stopping: Running", never,
		rtPod(sb, exit("a1", "app", 0), setupDone, proxyUp), nil, nil, sidecarView{
			Phase: v1.PodRunning, Initialized: true, NotReadyMsg: unready("app"),
			Init: []string{"proxy:started,ready", "setup:not started,ready"},
		})
	completed := sidecarView{Phase: v1.PodSucceeded, Initialized: true,
		Init: []string{"proxy:not started", "setup:not started,ready"}}
	f("Never, the app exited 0, the sidecar stopped (143): Succeeded", never,
		rtPod(sb, exit("a1", "app", 0), setupDone, exit("p1", "proxy", 143)), nil, nil, completed)
	f("OnFailure, the app exited 0, the sidecar killed (137): Succeeded", onFailure,
		rtPod(sb, exit("a1", "app", 0), setupDone, exit("p1", "proxy", 137)), nil, nil, completed)
	f("Never, the app exited 1, the sidecar stopped: Failed", never,
		rtPod(sb, exit("a1", "app", 1), setupDone, exit("p1", "proxy", 143)), nil, nil, sidecarView{
			Phase: v1.PodFailed, Initialized: true, Init: []string{"proxy:not started", "setup:not started,ready"},
		})
}

func TestContainerStatusProbes(t *testing.T) {
	spec := &v1.Container{Name: "app", Image: "busybox:1.36"}
	rt := rtPod(sbList(rtReady("sb1", 1)), rtRunning("c1", "sb1", "app", 0))
	f := func(name string, probes ProbeState, wantStarted, wantReady bool) {
		t.Helper()
		cs := containerStatus(spec, rt, probes, nil, "", "containerd", nil)
		if cs.Started == nil || *cs.Started != wantStarted || cs.Ready != wantReady {
			t.Errorf("%s: started %v ready %v, want %v %v", name, cs.Started, cs.Ready, wantStarted, wantReady)
		}
	}
	f("no probes: running is started and ready", nil, true, true)
	f("startup probe not passed: neither", testProbes{notStarted: []string{"app"}}, false, false)
	f("started, readiness probe not passed", testProbes{notReady: []string{"app"}}, true, false)
	f("both passed", testProbes{}, true, true)
}

func TestPodPhaseSidecarRules(t *testing.T) {
	pod := unitPod(withRestartPolicy(v1.RestartPolicyNever), withInits("proxy", "setup"), withSidecars("proxy"))
	st := func(name string, s v1.ContainerState) v1.ContainerStatus {
		return v1.ContainerStatus{Name: name, State: s}
	}
	run := v1.ContainerState{Running: &v1.ContainerStateRunning{}}
	exit := func(code int32) v1.ContainerState {
		return v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}
	}
	f := func(name string, inits []v1.ContainerStatus, app v1.ContainerState, want v1.PodPhase) {
		t.Helper()
		if got := podPhase(pod, inits, []v1.ContainerStatus{st("app", app)}, true); got != want {
			t.Errorf("%s: phase %s, want %s", name, got, want)
		}
	}
	f("a sidecar's failure does not fail a Never pod", []v1.ContainerStatus{st("proxy", exit(1)), st("setup", exit(0))},
		run, v1.PodRunning)
	f("an ordinary init container's does", []v1.ContainerStatus{st("proxy", run), st("setup", exit(1))},
		run, v1.PodFailed)
	f("a running sidecar keeps a completed pod Running", []v1.ContainerStatus{st("proxy", run), st("setup", exit(0))},
		exit(0), v1.PodRunning)
	f("once it stopped, the app decides", []v1.ContainerStatus{st("proxy", exit(137)), st("setup", exit(0))},
		exit(0), v1.PodSucceeded)
}
