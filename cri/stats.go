package cri

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ListContainerStats returns resource usage of containers matching filter.
func (c *Client) ListContainerStats(ctx context.Context, filter *runtimeapi.ContainerStatsFilter) ([]*runtimeapi.ContainerStats, error) {
	resp, err := invoke(ctx, opListContainerStats, "", c.timeout, c.runtime.ListContainerStats,
		&runtimeapi.ListContainerStatsRequest{Filter: filter})
	if err != nil {
		return nil, err
	}
	return resp.Stats, nil
}

// ListPodSandboxStats returns resource usage of sandboxes matching filter.
func (c *Client) ListPodSandboxStats(ctx context.Context, filter *runtimeapi.PodSandboxStatsFilter) ([]*runtimeapi.PodSandboxStats, error) {
	resp, err := invoke(ctx, opListPodSandboxStats, "", c.timeout, c.runtime.ListPodSandboxStats,
		&runtimeapi.ListPodSandboxStatsRequest{Filter: filter})
	if err != nil {
		return nil, err
	}
	return resp.Stats, nil
}
