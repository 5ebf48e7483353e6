package pleg

import (
	"reflect"
	"strconv"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
)

const ns1 = int64(1_795_000_000_123_456_789) // a CRI timestamp in nanoseconds

func TestNsTime(t *testing.T) {
	f := func(ns int64, want time.Time) {
		t.Helper()
		if got := nsTime(ns); !got.Equal(want) || got.IsZero() != want.IsZero() {
			t.Errorf("nsTime(%d) = %v, want %v", ns, got, want)
		}
	}
	f(0, time.Time{})
	f(-5, time.Time{})
	f(1_795_000_000, time.Unix(1_795_000_000, 0)) // seconds where ns were due
	f(ns1, time.Unix(1_795_000_000, 123_456_789))
}

func TestPodIdentity(t *testing.T) {
	uid, name, ns, ok := PodIdentity(map[string]string{
		cri.LabelPodUID: "u-1", cri.LabelPodName: "web", cri.LabelPodNamespace: "prod", "other": "x",
	})
	if uid != "u-1" || name != "web" || ns != "prod" || !ok {
		t.Errorf("got %q %q %q %v", uid, name, ns, ok)
	}
	if _, _, _, ok := PodIdentity(map[string]string{cri.LabelPodName: "web"}); ok {
		t.Error("an object without a pod UID label is not podline's")
	}
	if _, _, _, ok := PodIdentity(nil); ok {
		t.Error("nil labels")
	}
}

func TestSandboxConversions(t *testing.T) {
	meta := &runtimeapi.PodSandboxMetadata{Name: "web", Namespace: "prod", Uid: "u-1", Attempt: 2}
	f := func(name string, got, want *Sandbox) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	f("list entry", SandboxFromList(&runtimeapi.PodSandbox{Id: "sb1", Metadata: meta,
		State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: ns1}),
		&Sandbox{ID: "sb1", Attempt: 2, State: SandboxReady, CreatedAt: time.Unix(0, ns1)})
	f("not ready list entry", SandboxFromList(&runtimeapi.PodSandbox{Id: "sb1", Metadata: meta,
		State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY}),
		&Sandbox{ID: "sb1", Attempt: 2, State: SandboxNotReady})
	f("status with IPs", SandboxFromStatus(&runtimeapi.PodSandboxStatus{Id: "sb1", Metadata: meta,
		State: runtimeapi.PodSandboxState_SANDBOX_READY, CreatedAt: ns1,
		Network: &runtimeapi.PodSandboxNetworkStatus{Ip: "10.88.0.5",
			AdditionalIps: []*runtimeapi.PodIP{{Ip: "fd00::5"}}}}),
		&Sandbox{ID: "sb1", Attempt: 2, State: SandboxReady, CreatedAt: time.Unix(0, ns1), IPs: []string{"10.88.0.5", "fd00::5"}})
	f("status of a host-network sandbox", SandboxFromStatus(&runtimeapi.PodSandboxStatus{Id: "sb1", Metadata: meta,
		State: runtimeapi.PodSandboxState_SANDBOX_NOTREADY, Network: &runtimeapi.PodSandboxNetworkStatus{}}),
		&Sandbox{ID: "sb1", Attempt: 2, State: SandboxNotReady})
	f("status without metadata; the CRI's zero state is READY", SandboxFromStatus(&runtimeapi.PodSandboxStatus{Id: "sb1"}),
		&Sandbox{ID: "sb1", State: SandboxReady})
}

func TestContainerConversions(t *testing.T) {
	meta := &runtimeapi.ContainerMetadata{Name: "app", Attempt: 3}
	annotations := map[string]string{cri.AnnotationContainerHash: "abc123", cri.AnnotationInitContainer: "true",
		cri.AnnotationTerminationGrace: "45"}
	grace := int64(45)
	f := func(name string, got, want *Container) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	f("list entry", ContainerFromList(&runtimeapi.Container{
		Id: "c1", PodSandboxId: "sb1", Metadata: meta, State: runtimeapi.ContainerState_CONTAINER_RUNNING,
		Image: &runtimeapi.ImageSpec{Image: "sha256:def", UserSpecifiedImage: "busybox:1.36"}, ImageRef: "sha256:def",
		CreatedAt: ns1, Annotations: annotations,
	}), &Container{ID: "c1", SandboxID: "sb1", Name: "app", Attempt: 3, State: ContainerRunning, Hash: "abc123",
		Grace: &grace, Init: true, Image: "busybox:1.36", ImageRef: "sha256:def", CreatedAt: time.Unix(0, ns1)})
	f("list entry of an app container in the unknown state", ContainerFromList(&runtimeapi.Container{
		Id: "c1", PodSandboxId: "sb1", Metadata: meta, State: runtimeapi.ContainerState_CONTAINER_UNKNOWN,
		Annotations: map[string]string{cri.AnnotationInitContainer: "false"},
	}), &Container{ID: "c1", SandboxID: "sb1", Name: "app", Attempt: 3, State: ContainerUnknown})

	f("exited status", ContainerFromStatus(&runtimeapi.ContainerStatus{
		Id: "c1", Metadata: meta, State: runtimeapi.ContainerState_CONTAINER_EXITED,
		CreatedAt: ns1, StartedAt: ns1 + 1_000, FinishedAt: ns1 + 2_000_000_000,
		ExitCode: 137, Reason: "OOMKilled", Message: "out of memory",
		Image: &runtimeapi.ImageSpec{Image: "sha256:def", UserSpecifiedImage: "busybox:1.36"}, ImageRef: "sha256:def",
		Annotations: annotations,
	}, "sb1"), &Container{ID: "c1", SandboxID: "sb1", Name: "app", Attempt: 3, State: ContainerExited,
		Hash: "abc123", Grace: &grace, Init: true, Image: "busybox:1.36", ImageRef: "sha256:def",
		CreatedAt: time.Unix(0, ns1), StartedAt: time.Unix(0, ns1+1_000), FinishedAt: time.Unix(0, ns1+2_000_000_000),
		ExitCode: 137, Reason: "OOMKilled", Message: "out of memory", Detailed: true})
	f("created status: no start or finish yet, image from the image spec", ContainerFromStatus(&runtimeapi.ContainerStatus{
		Id: "c1", Metadata: meta, State: runtimeapi.ContainerState_CONTAINER_CREATED, CreatedAt: ns1,
		Image: &runtimeapi.ImageSpec{Image: "docker.io/library/busybox:1.36"},
	}, "sb1"), &Container{ID: "c1", SandboxID: "sb1", Name: "app", Attempt: 3, State: ContainerCreated,
		Image: "docker.io/library/busybox:1.36", CreatedAt: time.Unix(0, ns1), Detailed: true})
}

// The grace period recorded on a container is read back, so an orphan
// stops within its own; anything else is no recorded grace.
func TestRecordedGrace(t *testing.T) {
	f := func(annotations map[string]string, want *int64) {
		t.Helper()
		got := ContainerFromList(&runtimeapi.Container{Id: "c1", Annotations: annotations}).Grace
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: grace %v, want %v", annotations, ptrString(got), ptrString(want))
		}
		got = ContainerFromStatus(&runtimeapi.ContainerStatus{Id: "c1", Annotations: annotations}, "sb1").Grace
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: status grace %v, want %v", annotations, ptrString(got), ptrString(want))
		}
	}
	secs := func(n int64) *int64 { return &n }
	f(nil, nil)
	f(map[string]string{cri.AnnotationTerminationGrace: "120"}, secs(120))
	f(map[string]string{cri.AnnotationTerminationGrace: "0"}, secs(0))
	f(map[string]string{cri.AnnotationTerminationGrace: ""}, nil)
	f(map[string]string{cri.AnnotationTerminationGrace: "-1"}, nil)
	f(map[string]string{cri.AnnotationTerminationGrace: "30s"}, nil)
}

func ptrString(p *int64) string {
	if p == nil {
		return "none"
	}
	return strconv.FormatInt(*p, 10)
}
