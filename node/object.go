package node

import (
	"runtime"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletapis "k8s.io/kubelet/pkg/apis"
)

// The OS and architecture labels say what podline was built for, which is
// what the node can run.
const (
	goos   = runtime.GOOS
	goarch = runtime.GOARCH
)

// initialNode is the Node podline registers: the default labels, then
// --node-labels over them, --register-with-taints, and the status. It
// returns the node events the status calls for.
func initialNode(c *Config, now time.Time, h Health) (*v1.Node, []string) {
	hostname := c.Hostname
	if hostname == "" {
		hostname = c.Name
	}
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: c.Name, Labels: Labels(hostname, c.Labels)}}
	if len(c.Taints) > 0 {
		n.Spec.Taints = append([]v1.Taint(nil), c.Taints...)
	}
	events := setStatus(n, c, now, h)
	setDeclaredFeatures(&n.Status, false)
	return n, events
}

// setStatus overwrites the parts of n's status that podline owns with what
// they are at now, keeping the transition times of unchanged conditions,
// and returns the node events the changes call for. What it does not own
// (volumes, images, other conditions) it leaves alone. Nothing of c is
// shared with n.
func setStatus(n *v1.Node, c *Config, now time.Time, h Health) []string {
	st := &n.Status
	st.Capacity = c.Capacity.DeepCopy()
	st.Allocatable = c.Allocatable.DeepCopy()
	st.Addresses = append([]v1.NodeAddress(nil), c.Addresses...)
	st.NodeInfo = *c.Info.DeepCopy()
	st.DaemonEndpoints.KubeletEndpoint.Port = c.KubeletPort
	return setConditions(st, h, metav1.NewTime(now))
}

// ensureRuntimeLabels puts the OS and architecture labels back if someone
// removed or changed them (the scheduler needs them for nodeSelectors on
// kubernetes.io/os) and says whether it did.
func ensureRuntimeLabels(n *v1.Node) bool {
	changed := false
	for k, v := range map[string]string{v1.LabelOSStable: goos, v1.LabelArchStable: goarch} {
		if n.Labels[k] != v {
			if n.Labels == nil {
				n.Labels = map[string]string{}
			}
			n.Labels[k] = v
			changed = true
		}
	}
	return changed
}

// ownedLabels are the labels podline keeps current on a Node that already
// exists when it starts: those it derives itself or that are about where
// the machine is. Other --node-labels only apply when the Node is created,
// as with the kubelet, so an administrator's later edits stand.
var ownedLabels = []string{
	v1.LabelHostname,
	v1.LabelTopologyZone,
	v1.LabelTopologyRegion,
	v1.LabelFailureDomainBetaZone,
	v1.LabelFailureDomainBetaRegion,
	v1.LabelInstanceTypeStable,
	v1.LabelInstanceType,
	v1.LabelOSStable,
	v1.LabelArchStable,
	v1.LabelWindowsBuild,
	kubeletapis.LabelOS,
	kubeletapis.LabelArch,
}

// reconcileExisting makes a Node that was already registered agree with
// the one podline would have created, in what podline may change on
// update: its owned labels (an owned label given empty is removed) and,
// when missing, capacity and allocatable. Taints are left: the node may not
// change them. It says whether existing changed.
func reconcileExisting(existing, initial *v1.Node) bool {
	changed := false
	if existing.Labels == nil {
		existing.Labels = map[string]string{}
	}
	for _, k := range ownedLabels {
		v, ok := initial.Labels[k]
		if !ok {
			continue
		}
		old, had := existing.Labels[k]
		switch {
		case v == "" && had:
			delete(existing.Labels, k)
			changed = true
		case v != "" && old != v:
			existing.Labels[k] = v
			changed = true
		}
	}
	if existing.Status.Capacity == nil && initial.Status.Capacity != nil {
		existing.Status.Capacity = initial.Status.Capacity.DeepCopy()
		changed = true
	}
	if existing.Status.Allocatable == nil && initial.Status.Allocatable != nil {
		existing.Status.Allocatable = initial.Status.Allocatable.DeepCopy()
		changed = true
	}
	return changed
}
