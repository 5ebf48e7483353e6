package stages

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// A pod asking for an AppArmor profile other than Unconfined is refused by
// a node without AppArmor, as the kubelet refuses it, and admitted by one
// with it.
func TestAdmitAppArmor(t *testing.T) {
	f := func(name string, hostAppArmor bool, profile v1.AppArmorProfileType, wantReason, wantMessage string) {
		t.Helper()
		node := &Node{Name: "node-a", CPUMilli: 4000, MemoryBytes: 8 << 30, MaxPods: 110}
		node.Security.AppArmor = hostAppArmor
		pod := unitPod(func(p *v1.Pod) {
			if profile != "" {
				p.Spec.Containers[0].SecurityContext = &v1.SecurityContext{AppArmorProfile: &v1.AppArmorProfile{Type: profile}}
			}
		})
		rej := Admit(pod, &AdmitNode{Node: node}, &Ledger{})
		var reason, message string
		if rej != nil {
			reason, message = rej.Reason, rej.Message
		}
		if reason != wantReason || message != wantMessage {
			t.Errorf("%s: rejected %q %q, want %q %q", name, reason, message, wantReason, wantMessage)
		}
	}
	f("no profile, no AppArmor", false, "", "", "")
	f("Unconfined, no AppArmor", false, v1.AppArmorProfileTypeUnconfined, "", "")
	f("RuntimeDefault, no AppArmor", false, v1.AppArmorProfileTypeRuntimeDefault,
		"AppArmor", "Cannot enforce AppArmor: AppArmor is not enabled on the host")
	f("RuntimeDefault with AppArmor", true, v1.AppArmorProfileTypeRuntimeDefault, "", "")
}
