package cri

import (
	"context"
	"testing"
	"time"

	"github.com/podline/podline/cri/fake"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// dialFake starts a fake runtime and a Client on it.
func dialFake(t *testing.T, opts fake.Options, requestTimeout time.Duration) (*Client, *fake.Server) {
	t.Helper()
	sock, srv := fake.Listen(t, opts)
	c, err := Dial(context.Background(), "unix://"+sock, "", requestTimeout)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, srv
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func podConfig(name string) *runtimeapi.PodSandboxConfig {
	return &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: name, Namespace: "ns", Uid: "uid-" + name},
		Labels: map[string]string{
			LabelPodName: name, LabelPodNamespace: "ns", LabelPodUID: "uid-" + name,
		},
	}
}

func appConfig(name string) *runtimeapi.ContainerConfig {
	return &runtimeapi.ContainerConfig{
		Metadata:    &runtimeapi.ContainerMetadata{Name: name},
		Image:       &runtimeapi.ImageSpec{Image: "busybox:1"},
		Labels:      map[string]string{LabelContainerName: name},
		Annotations: map[string]string{AnnotationRestartCount: "0"},
	}
}
