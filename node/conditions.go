package node

import (
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Health is what the caller's checks said at one status computation.
type Health struct {
	// Ready is nil when the runtime and every readiness check pass, else
	// the reason the node is not ready.
	Ready error
	Pressures
}

// pressureText is what a pressure condition says in each state, and the
// event that announces the state (the kubelet's wording, which people
// grep for).
type pressureText struct {
	typ                   v1.NodeConditionType
	onReason, onMessage   string
	onEvent               string
	offReason, offMessage string
	offEvent              string
}

var (
	memoryText = pressureText{v1.NodeMemoryPressure,
		"KubeletHasInsufficientMemory", "kubelet has insufficient memory available", "NodeHasInsufficientMemory",
		"KubeletHasSufficientMemory", "kubelet has sufficient memory available", "NodeHasSufficientMemory"}
	diskText = pressureText{v1.NodeDiskPressure,
		"KubeletHasDiskPressure", "kubelet has disk pressure", "NodeHasDiskPressure",
		"KubeletHasNoDiskPressure", "kubelet has no disk pressure", "NodeHasNoDiskPressure"}
	pidText = pressureText{v1.NodePIDPressure,
		"KubeletHasInsufficientPID", "kubelet has insufficient PID available", "NodeHasInsufficientPID",
		"KubeletHasSufficientPID", "kubelet has sufficient PID available", "NodeHasSufficientPID"}
)

// requiredCapacity are the resources without which the node is not ready:
// the scheduler cannot place a pod on a node that does not say them.
var requiredCapacity = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods, v1.ResourceEphemeralStorage}

// setConditions brings the four conditions of st up to date at now and
// returns the reasons of the node events the changes call for. Every
// condition's heartbeat becomes now; a transition time moves only when its
// status changes. Conditions of other types (a node problem detector's)
// are left alone; the ones podline adds go in the order MemoryPressure,
// DiskPressure, PIDPressure, Ready, as the kubelet's.
func setConditions(st *v1.NodeStatus, h Health, now metav1.Time) (events []string) {
	for _, c := range []struct {
		text  pressureText
		under bool
	}{{memoryText, h.Memory}, {diskText, h.Disk}, {pidText, h.PID}} {
		if ev := setPressure(st, c.text, c.under, now); ev != "" {
			events = append(events, ev)
		}
	}
	if ev := setReady(st, h.Ready, now); ev != "" {
		events = append(events, ev)
	}
	return events
}

func findCondition(st *v1.NodeStatus, typ v1.NodeConditionType) *v1.NodeCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			return &st.Conditions[i]
		}
	}
	return nil
}

// setPressure updates one pressure condition. Its reason and message
// change only with its status, so a message someone else wrote stays until
// the status moves.
func setPressure(st *v1.NodeStatus, text pressureText, under bool, now metav1.Time) (event string) {
	c := findCondition(st, text.typ)
	if c == nil {
		// A new condition starts Unknown, so the switch below always
		// fills it in and announces it.
		st.Conditions = append(st.Conditions, v1.NodeCondition{Type: text.typ, Status: v1.ConditionUnknown})
		c = &st.Conditions[len(st.Conditions)-1]
	}
	c.LastHeartbeatTime = now
	want, reason, message, ev := v1.ConditionFalse, text.offReason, text.offMessage, text.offEvent
	if under {
		want, reason, message, ev = v1.ConditionTrue, text.onReason, text.onMessage, text.onEvent
	}
	if c.Status == want {
		return ""
	}
	c.Status, c.Reason, c.Message, c.LastTransitionTime = want, reason, message, now
	return ev
}

// setReady updates the Ready condition. Unlike the pressure conditions its
// message always says the current reason for not being ready.
func setReady(st *v1.NodeStatus, notReady error, now metav1.Time) (event string) {
	var missing []string
	for _, r := range requiredCapacity {
		if _, ok := st.Capacity[r]; !ok {
			missing = append(missing, string(r))
		}
	}
	if len(missing) > 0 {
		notReady = errors.Join(notReady, fmt.Errorf("missing node capacity for resources: %s", strings.Join(missing, ", ")))
	}
	want := v1.NodeCondition{
		Type: v1.NodeReady, Status: v1.ConditionTrue,
		Reason: "KubeletReady", Message: "kubelet is posting ready status",
		LastHeartbeatTime: now, LastTransitionTime: now,
	}
	if notReady != nil {
		want.Status, want.Reason = v1.ConditionFalse, "KubeletNotReady"
		want.Message = strings.ReplaceAll(notReady.Error(), "\n", "; ")
	}
	c := findCondition(st, v1.NodeReady)
	if c == nil {
		st.Conditions = append(st.Conditions, want)
		return ""
	}
	changed := c.Status != want.Status
	if !changed {
		want.LastTransitionTime = c.LastTransitionTime
	}
	*c = want
	if !changed {
		return ""
	}
	if want.Status == v1.ConditionTrue {
		return "NodeReady"
	}
	return "NodeNotReady"
}
