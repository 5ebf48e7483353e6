package cri

import (
	"context"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// CreateContainer creates a container in a sandbox and returns its id.
// sandboxCfg is the config the sandbox was run with.
func (c *Client) CreateContainer(ctx context.Context, sandboxID string, cfg *runtimeapi.ContainerConfig, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error) {
	resp, err := invoke(ctx, opCreateContainer, sandboxID+"/"+cfg.GetMetadata().GetName(), c.timeout, c.runtime.CreateContainer,
		&runtimeapi.CreateContainerRequest{PodSandboxId: sandboxID, Config: cfg, SandboxConfig: sandboxCfg})
	if err != nil {
		return "", err
	}
	return resp.ContainerId, nil
}

// StartContainer starts a created container.
func (c *Client) StartContainer(ctx context.Context, id string) error {
	_, err := invoke(ctx, opStartContainer, id, c.timeout, c.runtime.StartContainer,
		&runtimeapi.StartContainerRequest{ContainerId: id})
	return err
}

// StopContainer asks the container to stop and lets the runtime kill it
// after grace (sent in whole seconds, rounded up). The runtime may use the
// whole grace period, so the deadline is the request timeout plus grace.
// Stopping a stopped container succeeds.
func (c *Client) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	secs := wholeSeconds(grace)
	_, err := invoke(ctx, opStopContainer, id, c.timeout+time.Duration(secs)*time.Second, c.runtime.StopContainer,
		&runtimeapi.StopContainerRequest{ContainerId: id, Timeout: secs})
	return err
}

// RemoveContainer removes the container, killing it if it still runs.
// Removing a removed container succeeds.
func (c *Client) RemoveContainer(ctx context.Context, id string) error {
	_, err := invoke(ctx, opRemoveContainer, id, c.timeout, c.runtime.RemoveContainer,
		&runtimeapi.RemoveContainerRequest{ContainerId: id})
	return err
}

// ListContainers lists containers matching filter (nil lists all).
func (c *Client) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	resp, err := invoke(ctx, opListContainers, "", c.timeout, c.runtime.ListContainers,
		&runtimeapi.ListContainersRequest{Filter: filter})
	if err != nil {
		return nil, err
	}
	return resp.Containers, nil
}

// ContainerStatus returns the container's status; ErrNotFound when unknown.
func (c *Client) ContainerStatus(ctx context.Context, id string) (*runtimeapi.ContainerStatus, error) {
	resp, err := invoke(ctx, opContainerStatus, id, c.timeout, c.runtime.ContainerStatus,
		&runtimeapi.ContainerStatusRequest{ContainerId: id})
	if err != nil {
		return nil, err
	}
	return resp.Status, nil
}

// ExecSync runs cmd in the container and waits for it. timeout (whole
// seconds, rounded up) is enforced by the runtime; the call's deadline is
// the request timeout plus timeout. Without a timeout (0) the command runs
// as long as it takes and ctx alone bounds the call, as the kubelet runs
// lifecycle hooks: a postStart that waits minutes for a proxy is no
// runtime that stopped answering.
func (c *Client) ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (*runtimeapi.ExecSyncResponse, error) {
	secs := wholeSeconds(timeout)
	deadline := time.Duration(0)
	if secs > 0 {
		deadline = c.timeout + time.Duration(secs)*time.Second
	}
	return invoke(ctx, opExecSync, id, deadline, c.runtime.ExecSync,
		&runtimeapi.ExecSyncRequest{ContainerId: id, Cmd: cmd, Timeout: secs})
}
