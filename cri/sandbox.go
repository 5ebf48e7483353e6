package cri

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RunPodSandbox creates and starts a sandbox and returns its id.
func (c *Client) RunPodSandbox(ctx context.Context, cfg *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	resp, err := invoke(ctx, opRunPodSandbox, sandboxName(cfg), c.timeout, c.runtime.RunPodSandbox,
		&runtimeapi.RunPodSandboxRequest{Config: cfg, RuntimeHandler: runtimeHandler})
	if err != nil {
		return "", err
	}
	return resp.PodSandboxId, nil
}

// StopPodSandbox stops the sandbox and kills its containers. Stopping a
// stopped or removed sandbox succeeds.
func (c *Client) StopPodSandbox(ctx context.Context, id string) error {
	_, err := invoke(ctx, opStopPodSandbox, id, c.timeout, c.runtime.StopPodSandbox,
		&runtimeapi.StopPodSandboxRequest{PodSandboxId: id})
	return err
}

// RemovePodSandbox removes the sandbox and its containers. Removing a
// removed sandbox succeeds.
func (c *Client) RemovePodSandbox(ctx context.Context, id string) error {
	_, err := invoke(ctx, opRemovePodSandbox, id, c.timeout, c.runtime.RemovePodSandbox,
		&runtimeapi.RemovePodSandboxRequest{PodSandboxId: id})
	return err
}

// PodSandboxStatus returns the sandbox's status; ErrNotFound when unknown.
func (c *Client) PodSandboxStatus(ctx context.Context, id string) (*runtimeapi.PodSandboxStatus, error) {
	resp, err := invoke(ctx, opPodSandboxStatus, id, c.timeout, c.runtime.PodSandboxStatus,
		&runtimeapi.PodSandboxStatusRequest{PodSandboxId: id})
	if err != nil {
		return nil, err
	}
	return resp.Status, nil
}

// ListPodSandbox lists sandboxes matching filter (nil lists all).
func (c *Client) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	resp, err := invoke(ctx, opListPodSandbox, "", c.timeout, c.runtime.ListPodSandbox,
		&runtimeapi.ListPodSandboxRequest{Filter: filter})
	if err != nil {
		return nil, err
	}
	return resp.Items, nil
}

// sandboxName names a sandbox in errors before it has an id.
func sandboxName(cfg *runtimeapi.PodSandboxConfig) string {
	m := cfg.GetMetadata()
	if m == nil {
		return ""
	}
	return m.Namespace + "/" + m.Name
}
