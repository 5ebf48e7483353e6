package cri

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Version returns the runtime's name and versions.
func (c *Client) Version(ctx context.Context) (*runtimeapi.VersionResponse, error) {
	return invoke(ctx, opVersion, "", c.timeout, c.runtime.Version, &runtimeapi.VersionRequest{})
}

// Status returns the runtime's conditions (RuntimeReady, NetworkReady) and,
// when verbose, its extra info.
func (c *Client) Status(ctx context.Context, verbose bool) (*runtimeapi.StatusResponse, error) {
	return invoke(ctx, opStatus, "", c.timeout, c.runtime.Status, &runtimeapi.StatusRequest{Verbose: verbose})
}

// RuntimeConfig returns the runtime's configuration the kubelet adopts:
// on Linux its cgroup driver. Runtimes that predate the call (containerd
// 1.x) answer it with an error of class ErrUnimplemented.
func (c *Client) RuntimeConfig(ctx context.Context) (*runtimeapi.RuntimeConfigResponse, error) {
	return invoke(ctx, opRuntimeConfig, "", c.timeout, c.runtime.RuntimeConfig, &runtimeapi.RuntimeConfigRequest{})
}
