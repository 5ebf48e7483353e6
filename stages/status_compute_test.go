package stages

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podline/podline/pleg"
)

var statusNode = &Node{Name: "node-a", IPs: []string{"192.0.2.10", "2001:db8::10"}}

// statusNow has sub-second digits so truncation to seconds shows.
var statusNow = baseTime.Add(2*time.Hour + 300*time.Millisecond)

func computeStatus(pod *v1.Pod, rt *pleg.Pod, waiting map[string]Waiting, prev *v1.PodStatus) v1.PodStatus {
	return PodStatus(StatusInput{
		Pod: pod, Runtime: rt, Node: statusNode, RuntimeName: "containerd", Now: statusNow, Prev: prev,
		Sync: &PodSync{FirstSeen: baseTime.Add(time.Hour), Waiting: waiting},
	})
}

func asJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestPodStatusPhase(t *testing.T) {
	f := func(name string, pod *v1.Pod, rt *pleg.Pod, waiting map[string]Waiting, prev v1.PodPhase, want v1.PodPhase) {
		t.Helper()
		var p *v1.PodStatus
		if prev != "" {
			p = &v1.PodStatus{Phase: prev}
		}
		if got := computeStatus(pod, rt, waiting, p).Phase; got != want {
			t.Errorf("%s: phase %s, want %s", name, got, want)
		}
	}
	pol := func(rp v1.RestartPolicy) *v1.Pod { return unitPod(withRestartPolicy(rp), withApps("a", "b")) }
	sb := sbList(rtReady("sb1", 1))
	at := baseTime.Add(time.Hour)
	run := func(n string) *pleg.Container { return rtRunning(n+"1", "sb1", n, 0) }
	exit := func(n string, code int32) *pleg.Container { return rtExited(n+"1", "sb1", n, 0, code, at) }
	loop := map[string]Waiting{"b": {Reason: "CrashLoopBackOff"}}

	f("nothing in the runtime", pol(v1.RestartPolicyAlways), nil, nil, "", v1.PodPending)
	f("one container not created yet", pol(v1.RestartPolicyAlways), rtPod(sb, run("a")), nil, "", v1.PodPending)
	f("all running", pol(v1.RestartPolicyNever), rtPod(sb, run("a"), run("b")), nil, "", v1.PodRunning)
	f("one running, one failed, Never", pol(v1.RestartPolicyNever), rtPod(sb, run("a"), exit("b", 1)), nil, "", v1.PodRunning)
	f("Always, all exited", pol(v1.RestartPolicyAlways), rtPod(sb, exit("a", 0), exit("b", 1)), nil, "", v1.PodRunning)
	f("Never, all exited 0", pol(v1.RestartPolicyNever), rtPod(sb, exit("a", 0), exit("b", 0)), nil, "", v1.PodSucceeded)
	f("Never, one failed", pol(v1.RestartPolicyNever), rtPod(sb, exit("a", 0), exit("b", 1)), nil, "", v1.PodFailed)
	f("OnFailure, all exited 0", pol(v1.RestartPolicyOnFailure), rtPod(sb, exit("a", 0), exit("b", 0)), nil, "", v1.PodSucceeded)
	f("OnFailure, one failed and restarting", pol(v1.RestartPolicyOnFailure), rtPod(sb, exit("a", 0), exit("b", 1)), loop, "", v1.PodRunning)
	f("OnFailure, one failed, restart not planned yet", pol(v1.RestartPolicyOnFailure), rtPod(sb, exit("a", 0), exit("b", 1)), nil, "", v1.PodRunning)
	f("Always, one in CrashLoopBackOff beside a running one", pol(v1.RestartPolicyAlways), rtPod(sb, run("a"), exit("b", 1)), loop, "", v1.PodRunning)

	withInit := func(rp v1.RestartPolicy) *v1.Pod { return unitPod(withRestartPolicy(rp), withInits("setup")) }
	f("init container running", withInit(v1.RestartPolicyAlways), rtPod(sb, rtRunning("i1", "sb1", "setup", 0)), nil, "", v1.PodPending)
	f("init container failed, Never", withInit(v1.RestartPolicyNever), rtPod(sb, rtExited("i1", "sb1", "setup", 0, 1, at)), nil, "", v1.PodFailed)
	f("init container failed, Always: retried", withInit(v1.RestartPolicyAlways), rtPod(sb, rtExited("i1", "sb1", "setup", 0, 1, at)),
		map[string]Waiting{"setup": {Reason: "CrashLoopBackOff"}}, "", v1.PodPending)
	f("init container done, app running", withInit(v1.RestartPolicyAlways),
		rtPod(sb, rtRunning("a1", "sb1", "app", 0), rtExited("i1", "sb1", "setup", 0, 0, at)), nil, "", v1.PodRunning)
	f("init container removed by GC after the app started", withInit(v1.RestartPolicyNever),
		rtPod(sb, rtRunning("a1", "sb1", "app", 0)), nil, "", v1.PodRunning)

	f("a succeeded pod never comes back", pol(v1.RestartPolicyNever), rtPod(sb, run("a"), run("b")), nil, v1.PodSucceeded, v1.PodSucceeded)
	f("a failed pod never comes back", pol(v1.RestartPolicyNever), nil, nil, v1.PodFailed, v1.PodFailed)
	f("a running pod may go back to pending", pol(v1.RestartPolicyAlways), nil, nil, v1.PodRunning, v1.PodPending)
}

func TestPodStatusConditions(t *testing.T) {
	type c struct {
		Type    v1.PodConditionType
		Status  v1.ConditionStatus
		Reason  string
		Message string
		At      time.Time
	}
	f := func(name string, pod *v1.Pod, rt *pleg.Pod, prev *v1.PodStatus, want []c) {
		t.Helper()
		var got []c
		for _, pc := range computeStatus(pod, rt, nil, prev).Conditions {
			got = append(got, c{pc.Type, pc.Status, pc.Reason, pc.Message, pc.LastTransitionTime.Time})
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	now := statusNow.Truncate(time.Second)
	earlier := baseTime.Add(-time.Hour)
	sb := sbList(rtReady("sb1", 1))
	at := baseTime.Add(time.Hour)
	ready := []c{
		{v1.PodReadyToStartContainers, v1.ConditionTrue, "", "", now},
		{v1.PodInitialized, v1.ConditionTrue, "", "", now},
		{v1.PodReady, v1.ConditionTrue, "", "", now},
		{v1.ContainersReady, v1.ConditionTrue, "", "", now},
		{v1.PodScheduled, v1.ConditionTrue, "", "", now},
	}
	two := unitPod(withApps("a", "b"))
	both := rtPod(sb, rtRunning("a1", "sb1", "a", 0), rtRunning("b1", "sb1", "b", 0))
	f("running and ready, first status: every transition now, truncated to the second", two, both, nil, ready)

	f("one container not running", two, rtPod(sb, rtRunning("a1", "sb1", "a", 0), rtExited("b1", "sb1", "b", 0, 1, at)), nil, []c{
		{v1.PodReadyToStartContainers, v1.ConditionTrue, "", "", now},
		{v1.PodInitialized, v1.ConditionTrue, "", "", now},
		{v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [b]", now},
		{v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [b]", now},
		{v1.PodScheduled, v1.ConditionTrue, "", "", now},
	})
	f("nothing in the runtime", unitPod(withInits("first", "second"), withApps("a", "b")), nil, nil, []c{
		{v1.PodReadyToStartContainers, v1.ConditionFalse, "", "", now},
		{v1.PodInitialized, v1.ConditionFalse, "ContainersNotInitialized", "containers with incomplete status: [first second]", now},
		{v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [a b]", now},
		{v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [a b]", now},
		{v1.PodScheduled, v1.ConditionTrue, "", "", now},
	})
	f("completed pod", unitPod(withRestartPolicy(v1.RestartPolicyNever)),
		rtPod(sbList(rtDead("sb1", 1)), rtExited("c1", "sb1", "app", 0, 0, at)), nil, []c{
			{v1.PodReadyToStartContainers, v1.ConditionFalse, "", "", now},
			{v1.PodInitialized, v1.ConditionTrue, "", "", now},
			{v1.PodReady, v1.ConditionFalse, "PodCompleted", "", now},
			{v1.ContainersReady, v1.ConditionFalse, "PodCompleted", "", now},
			{v1.PodScheduled, v1.ConditionTrue, "", "", now},
		})
	noIP := rtReady("sb1", 1)
	noIP.IPs = nil
	f("ready sandbox without an address yet: not ready to start containers", unitPod(), rtPod(sbList(noIP)), nil, []c{
		{v1.PodReadyToStartContainers, v1.ConditionFalse, "", "", now},
		{v1.PodInitialized, v1.ConditionTrue, "", "", now},
		{v1.PodReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [app]", now},
		{v1.ContainersReady, v1.ConditionFalse, "ContainersNotReady", "containers with unready status: [app]", now},
		{v1.PodScheduled, v1.ConditionTrue, "", "", now},
	})
	hostNet := unitPod(func(p *v1.Pod) { p.Spec.HostNetwork = true })
	f("host-network sandbox needs no address", hostNet, rtPod(sbList(noIP), rtRunning("c1", "sb1", "app", 0)), nil, ready)

	// The previous status had Ready False since earlier, everything else
	// True since earlier: unchanged conditions keep their time.
	prev := &v1.PodStatus{Conditions: []v1.PodCondition{
		{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(earlier)},
		{Type: v1.PodInitialized, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(earlier)},
		{Type: v1.PodReady, Status: v1.ConditionFalse, LastTransitionTime: metav1.NewTime(earlier)},
		{Type: v1.ContainersReady, Status: v1.ConditionFalse, LastTransitionTime: metav1.NewTime(earlier)},
		{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: metav1.NewTime(earlier)},
	}}
	f("transition times kept for unchanged conditions", two, both, prev, []c{
		{v1.PodReadyToStartContainers, v1.ConditionTrue, "", "", earlier},
		{v1.PodInitialized, v1.ConditionTrue, "", "", earlier},
		{v1.PodReady, v1.ConditionTrue, "", "", now},
		{v1.ContainersReady, v1.ConditionTrue, "", "", now},
		{v1.PodScheduled, v1.ConditionTrue, "", "", earlier},
	})
}

func TestPodStatusUnchangedPodIsIdentical(t *testing.T) {
	pod := unitPod(withInits("setup"))
	rt := rtPod(sbList(rtReady("sb1", 1)), rtRunning("a1", "sb1", "app", 0), rtExited("i1", "sb1", "setup", 0, 0, baseTime))
	first := computeStatus(pod, rt, nil, nil)
	in := StatusInput{Pod: pod, Runtime: rt, Node: statusNode, RuntimeName: "containerd",
		Now: statusNow.Add(time.Hour), Prev: &first, Sync: &PodSync{FirstSeen: baseTime.Add(time.Hour)}}
	if second := PodStatus(in); !reflect.DeepEqual(asJSON(second), asJSON(first)) {
		t.Errorf("an hour later, same pod and runtime:\n got %s\nwant %s", asJSON(second), asJSON(first))
	}
}

func TestPodStatusIPs(t *testing.T) {
	f := func(name string, pod *v1.Pod, rt *pleg.Pod, prev *v1.PodStatus, wantIP string, wantIPs ...string) {
		t.Helper()
		st := computeStatus(pod, rt, nil, prev)
		var ips []string
		for _, ip := range st.PodIPs {
			ips = append(ips, ip.IP)
		}
		if st.PodIP != wantIP || !reflect.DeepEqual(ips, wantIPs) {
			t.Errorf("%s: podIP %q podIPs %q, want %q %q", name, st.PodIP, ips, wantIP, wantIPs)
		}
		if st.HostIP != "192.0.2.10" || len(st.HostIPs) != 2 || st.HostIPs[1].IP != "2001:db8::10" {
			t.Errorf("%s: hostIP %q hostIPs %+v, want the node's addresses", name, st.HostIP, st.HostIPs)
		}
	}
	dual := rtReady("sb1", 1)
	dual.IPs = []string{"10.88.0.7", "fd00::7"}
	f("dual-stack sandbox", unitPod(), rtPod(sbList(dual)), nil, "10.88.0.7", "10.88.0.7", "fd00::7")
	f("host network uses the node's addresses", unitPod(func(p *v1.Pod) { p.Spec.HostNetwork = true }),
		rtPod(sbList(dual)), nil, "192.0.2.10", "192.0.2.10", "2001:db8::10")
	f("nothing yet", unitPod(), nil, nil, "")
	prev := &v1.PodStatus{PodIP: "10.88.0.7", PodIPs: []v1.PodIP{{IP: "10.88.0.7"}}}
	f("sandbox gone: the pod keeps the address it had", unitPod(), rtPod(nil, rtExited("c1", "sb1", "app", 0, 0, baseTime)),
		prev, "10.88.0.7", "10.88.0.7")
	stopped := rtDead("sb1", 1)
	stopped.IPs = nil
	f("stopped sandbox without an address: the pod keeps the one it had", unitPod(), rtPod(sbList(stopped)),
		prev, "10.88.0.7", "10.88.0.7")
	older := &v1.PodStatus{PodIP: "10.88.0.3", PodIPs: []v1.PodIP{{IP: "10.88.0.3"}}}
	f("a new sandbox's address replaces the kept one", unitPod(), rtPod(sbList(dual)), older, "10.88.0.7", "10.88.0.7", "fd00::7")
}

func TestPodStatusStartTime(t *testing.T) {
	firstSeen := baseTime.Add(time.Hour) // as computeStatus sets it
	f := func(name string, rt *pleg.Pod, prev *v1.PodStatus, want time.Time) {
		t.Helper()
		st := computeStatus(unitPod(), rt, nil, prev)
		if st.StartTime == nil || !st.StartTime.Time.Equal(want) {
			t.Errorf("%s: startTime %v, want %v", name, st.StartTime, want)
		}
	}
	old := rtDead("sb0", 0) // created at baseTime
	f("first status: when podline first saw the pod", nil, nil, firstSeen)
	f("after a podline restart: when the oldest sandbox was created",
		rtPod(sbList(rtReady("sb2", 2), rtDead("sb1", 1), old)), nil, baseTime)
	late := rtReady("sb9", 9)
	late.CreatedAt = firstSeen.Add(time.Minute)
	f("sandbox created after the pod was seen", rtPod(sbList(late)), nil, firstSeen)
	zero := rtReady("sb0", 0)
	zero.CreatedAt = time.Time{}
	f("sandbox creation time unknown", rtPod(sbList(zero)), nil, firstSeen)
	kept := metav1.NewTime(baseTime.Add(-24 * time.Hour))
	f("published start time is kept", rtPod(sbList(old)), &v1.PodStatus{StartTime: &kept}, kept.Time)
}

func TestPodStatusRejected(t *testing.T) {
	pod := unitPod(func(p *v1.Pod) { p.Spec.Containers[0].Resources = testResources("100m", "", "", "") })
	rej := &Rejection{Reason: "OutOfcpu", Message: "Node didn't have enough resource: cpu, requested: 100, used: 4000, capacity: 4000"}
	st := PodStatus(StatusInput{Pod: pod, Node: statusNode, RuntimeName: "containerd", Now: statusNow,
		Sync: &PodSync{FirstSeen: baseTime, Rejection: rej}})
	want := v1.PodStatus{
		Phase: v1.PodFailed, Reason: rej.Reason, Message: rej.Message, QOSClass: v1.PodQOSBurstable,
		HostIP: "192.0.2.10", HostIPs: []v1.HostIP{{IP: "192.0.2.10"}, {IP: "2001:db8::10"}},
		StartTime: ptrOf(metav1.NewTime(baseTime)),
		Conditions: []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue,
			LastTransitionTime: metav1.NewTime(statusNow.Truncate(time.Second))}},
	}
	if asJSON(st) != asJSON(want) {
		t.Errorf("rejected pod status:\n got %s\nwant %s", asJSON(st), asJSON(want))
	}
}
