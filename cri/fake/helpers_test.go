package fake

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// rig is a fake runtime on a real socket with raw CRI clients, so these
// tests check the fake without going through package cri.
type rig struct {
	srv *Server
	rt  runtimeapi.RuntimeServiceClient
	img runtimeapi.ImageServiceClient
	ctx context.Context
}

func newRig(t testing.TB, opts Options) *rig {
	t.Helper()
	sock, srv := Listen(t, opts)
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial fake: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return &rig{srv: srv, rt: runtimeapi.NewRuntimeServiceClient(conn), img: runtimeapi.NewImageServiceClient(conn), ctx: ctx}
}

func sandboxConfig(name string, labels map[string]string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata:     &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "default", Uid: "uid-" + name, Attempt: 1},
		Labels:       labels,
		Annotations:  map[string]string{"note": name},
		LogDirectory: "/var/log/pods/" + name,
	}
}

func hostNetworkConfig(name string) *runtimeapi.PodSandboxConfig {
	cfg := sandboxConfig(name, nil)
	cfg.Linux = &runtimeapi.LinuxPodSandboxConfig{SecurityContext: &runtimeapi.LinuxSandboxSecurityContext{
		NamespaceOptions: &runtimeapi.NamespaceOption{Network: runtimeapi.NamespaceMode_NODE},
	}}
	return cfg
}

func containerConfig(name string, labels map[string]string, env ...string) *runtimeapi.ContainerConfig {
	cfg := &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name, Attempt: 2},
		Image:    &runtimeapi.ImageSpec{Image: "busybox:1"},
		Labels:   labels,
		LogPath:  name + "/0.log",
	}
	for i := 0; i+1 < len(env); i += 2 {
		cfg.Envs = append(cfg.Envs, &runtimeapi.KeyValue{Key: env[i], Value: []byte(env[i+1])})
	}
	return cfg
}

func (r *rig) runSandbox(t *testing.T, cfg *runtimeapi.PodSandboxConfig) string {
	t.Helper()
	resp, err := r.rt.RunPodSandbox(r.ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	if err != nil {
		t.Fatalf("RunPodSandbox: %v", err)
	}
	return resp.PodSandboxId
}

func (r *rig) createContainer(t *testing.T, sandboxID string, cfg *runtimeapi.ContainerConfig) string {
	t.Helper()
	resp, err := r.rt.CreateContainer(r.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sandboxID, Config: cfg})
	if err != nil {
		t.Fatalf("CreateContainer: %v", err)
	}
	return resp.ContainerId
}

func (r *rig) startContainer(t *testing.T, id string) {
	t.Helper()
	if _, err := r.rt.StartContainer(r.ctx, &runtimeapi.StartContainerRequest{ContainerId: id}); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
}

func (r *rig) sandboxStatus(t *testing.T, id string) *runtimeapi.PodSandboxStatusResponse {
	t.Helper()
	resp, err := r.rt.PodSandboxStatus(r.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id})
	if err != nil {
		t.Fatalf("PodSandboxStatus %s: %v", id, err)
	}
	return resp
}

func (r *rig) containerStatus(t *testing.T, id string) *runtimeapi.ContainerStatus {
	t.Helper()
	resp, err := r.rt.ContainerStatus(r.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		t.Fatalf("ContainerStatus %s: %v", id, err)
	}
	return resp.Status
}

// waitState polls until the container reaches want or a second passes.
func (r *rig) waitState(t *testing.T, id string, want runtimeapi.ContainerState) *runtimeapi.ContainerStatus {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		st := r.containerStatus(t, id)
		if st.State == want {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("container %s: state %s, want %s", id, st.State, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func wantCode(t *testing.T, err error, want codes.Code) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Fatalf("got code %s (err %v), want %s", got, err, want)
	}
}
