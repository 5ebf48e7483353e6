package stages

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/podspec"
)

// appArmorRejection refuses a pod that asks for AppArmor profiles the node
// cannot enforce (podspec.CheckAppArmor), with the kubelet's reason and
// message, before anything of it is set up.
func appArmorRejection(pod *v1.Pod, node *Node) *Rejection {
	if err := podspec.CheckAppArmor(pod, node); err != nil {
		return &Rejection{Reason: "AppArmor", Message: "Cannot enforce AppArmor: " + err.Error()}
	}
	return nil
}
