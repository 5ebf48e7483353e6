package fake

import (
	"testing"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestUpdateResources(t *testing.T) {
	r := newRig(t, Options{})
	sb := r.runSandbox(t, sandboxConfig("pod", nil))
	cfg := containerConfig("app", nil)
	cfg.Linux = &runtimeapi.LinuxContainerConfig{Resources: &runtimeapi.LinuxContainerResources{CpuShares: 102, MemoryLimitInBytes: 64 << 20}}
	id := r.createContainer(t, sb, cfg)
	if got := r.containerStatus(t, id).GetResources().GetLinux(); got.GetCpuShares() != 102 || got.GetMemoryLimitInBytes() != 64<<20 {
		t.Fatalf("resources after create: %v", got)
	}
	r.startContainer(t, id)

	update := func(id string, res *runtimeapi.LinuxContainerResources) error {
		_, err := r.rt.UpdateContainerResources(r.ctx, &runtimeapi.UpdateContainerResourcesRequest{ContainerId: id, Linux: res})
		return err
	}
	wantCode(t, update(id, &runtimeapi.LinuxContainerResources{CpuShares: 204, MemoryLimitInBytes: 128 << 20}), codes.OK)
	if got := r.containerStatus(t, id).GetResources().GetLinux(); got.GetCpuShares() != 204 || got.GetMemoryLimitInBytes() != 128<<20 {
		t.Fatalf("resources after update: %v", got)
	}
	wantCode(t, update("nope", nil), codes.NotFound)
	if err := r.srv.ExitContainer(id, 0); err != nil {
		t.Fatal(err)
	}
	wantCode(t, update(id, &runtimeapi.LinuxContainerResources{CpuShares: 2}), codes.FailedPrecondition)

	if st := r.containerStatus(t, r.createContainer(t, sb, containerConfig("bare", nil))); st.Resources != nil {
		t.Fatalf("resources of a container given none: %v", st.Resources)
	}

	podUpdate := func(id string) error {
		_, err := r.rt.UpdatePodSandboxResources(r.ctx, &runtimeapi.UpdatePodSandboxResourcesRequest{PodSandboxId: id})
		return err
	}
	wantCode(t, podUpdate(sb), codes.OK)
	wantCode(t, podUpdate("nope"), codes.NotFound)
}
