package cgroupfs

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// qosRes builds requirements; "" leaves a value unset.
func qosRes(cpuReq, memReq, cpuLim, memLim string) v1.ResourceRequirements {
	var r v1.ResourceRequirements
	set := func(rl *v1.ResourceList, name v1.ResourceName, q string) {
		if q == "" {
			return
		}
		if *rl == nil {
			*rl = v1.ResourceList{}
		}
		(*rl)[name] = resource.MustParse(q)
	}
	set(&r.Requests, v1.ResourceCPU, cpuReq)
	set(&r.Requests, v1.ResourceMemory, memReq)
	set(&r.Limits, v1.ResourceCPU, cpuLim)
	set(&r.Limits, v1.ResourceMemory, memLim)
	return r
}

func qosPod(inits, apps []v1.ResourceRequirements) *v1.Pod {
	p := &v1.Pod{}
	for _, r := range inits {
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: "init", Resources: r})
	}
	for _, r := range apps {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: "app", Resources: r})
	}
	return p
}

func TestQOSClass(t *testing.T) {
	f := func(name string, inits, apps []v1.ResourceRequirements, want v1.PodQOSClass) {
		t.Helper()
		if got := QOSClass(qosPod(inits, apps)); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	type rr = []v1.ResourceRequirements
	full := qosRes("1", "1Gi", "1", "1Gi")

	f("nothing set", nil, rr{{}, {}}, v1.PodQOSBestEffort)
	f("no containers at all", nil, nil, v1.PodQOSBestEffort)
	f("only other resources", nil, rr{{Limits: v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse("1Gi")}}}, v1.PodQOSBestEffort)
	f("zero quantities count as unset", nil, rr{qosRes("0", "0", "0", "0")}, v1.PodQOSBestEffort)
	f("requests equal limits", nil, rr{full, qosRes("500m", "64Mi", "500m", "64Mi")}, v1.PodQOSGuaranteed)
	f("requests default to limits", nil, rr{qosRes("", "", "2", "2Gi")}, v1.PodQOSGuaranteed)
	f("one request defaults to its limit", nil, rr{qosRes("2", "", "2", "2Gi")}, v1.PodQOSGuaranteed)
	f("same quantity written differently", nil, rr{qosRes("1000m", "1024Mi", "1", "1Gi")}, v1.PodQOSGuaranteed)
	f("request below limit", nil, rr{qosRes("500m", "1Gi", "1", "1Gi")}, v1.PodQOSBurstable)
	f("cpu limit missing", nil, rr{qosRes("1", "1Gi", "", "1Gi")}, v1.PodQOSBurstable)
	f("memory limit missing", nil, rr{qosRes("1", "1Gi", "1", "")}, v1.PodQOSBurstable)
	f("requests only", nil, rr{qosRes("100m", "", "", "")}, v1.PodQOSBurstable)
	f("one guaranteed, one best-effort container", nil, rr{full, {}}, v1.PodQOSBurstable)
	f("init containers count: a best-effort init", rr{{}}, rr{full}, v1.PodQOSBurstable)
	f("init containers count: a burstable init", rr{qosRes("100m", "", "", "")}, rr{full}, v1.PodQOSBurstable)
	f("guaranteed init and app", rr{qosRes("", "", "2", "2Gi")}, rr{full}, v1.PodQOSGuaranteed)
	f("requests only in an init container", rr{qosRes("100m", "", "", "")}, rr{{}}, v1.PodQOSBurstable)

	p := qosPod(nil, rr{{}})
	p.Status.QOSClass = v1.PodQOSGuaranteed
	if got := QOSClass(p); got != v1.PodQOSGuaranteed {
		t.Errorf("a class already in the status is kept: %s", got)
	}
}

// An explicit zero request is not a missing one: Kubernetes does not
// default it to the limit, so the pod is Burstable.
func TestQOSClassExplicitZeroRequest(t *testing.T) {
	pod := qosPod(nil, []v1.ResourceRequirements{qosRes("0", "1Gi", "1", "1Gi")})
	if got := QOSClass(pod); got != v1.PodQOSBurstable {
		t.Errorf("%s, want Burstable", got)
	}
}
