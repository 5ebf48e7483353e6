package cri

import (
	"context"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Exec asks the runtime to prepare an interactive command in a container
// and returns the URL of its streaming server that serves it once.
func (c *Client) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (string, error) {
	resp, err := invoke(ctx, opExec, req.GetContainerId(), c.timeout, c.runtime.Exec, req)
	if err != nil {
		return "", err
	}
	return resp.GetUrl(), nil
}

// Attach asks the runtime for a stream to a running container's main
// process.
func (c *Client) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (string, error) {
	resp, err := invoke(ctx, opAttach, req.GetContainerId(), c.timeout, c.runtime.Attach, req)
	if err != nil {
		return "", err
	}
	return resp.GetUrl(), nil
}

// PortForward asks the runtime for a stream into a sandbox's network
// namespace.
func (c *Client) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (string, error) {
	resp, err := invoke(ctx, opPortForward, req.GetPodSandboxId(), c.timeout, c.runtime.PortForward, req)
	if err != nil {
		return "", err
	}
	return resp.GetUrl(), nil
}

// ReopenContainerLog makes the runtime reopen a container's log file
// after it was rotated away.
func (c *Client) ReopenContainerLog(ctx context.Context, id string) error {
	_, err := invoke(ctx, opReopenContainerLog, id, c.timeout, c.runtime.ReopenContainerLog,
		&runtimeapi.ReopenContainerLogRequest{ContainerId: id})
	return err
}

// CheckpointContainer asks the runtime to write a checkpoint of a running
// container to location (a tar archive), within timeout when set; the
// runtime's own default otherwise.
func (c *Client) CheckpointContainer(ctx context.Context, id, location string, timeout time.Duration) error {
	deadline := c.timeout
	secs := wholeSeconds(timeout)
	if secs > 0 {
		deadline += time.Duration(secs) * time.Second
	}
	_, err := invoke(ctx, opCheckpoint, id, deadline, c.runtime.CheckpointContainer,
		&runtimeapi.CheckpointContainerRequest{ContainerId: id, Location: location, Timeout: secs})
	return err
}
