package main

import (
	"context"
	"fmt"
	"strings"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
)

// benchSandboxes is the runtime's view of the suite's pods (named
// "bench-*"): the sandboxes still ready and all of them.
func benchSandboxes(ctx context.Context, rt *cri.Client) (ready int, all []string, err error) {
	sbs, err := rt.ListPodSandbox(ctx, nil)
	if err != nil {
		return 0, nil, err
	}
	for _, sb := range sbs {
		if !strings.HasPrefix(sb.GetMetadata().GetName(), "bench-") {
			continue
		}
		all = append(all, sb.Id)
		if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			ready++
		}
	}
	return ready, all, nil
}

// removeSandboxes stops and removes the sandboxes ids (and their
// containers): the kubelet leaves stopped sandboxes to its garbage
// collection, which a run does not wait for, and the next run must find
// the runtime as empty as the first did.
func removeSandboxes(ctx context.Context, rt *cri.Client, ids []string) error {
	for _, id := range ids {
		if err := rt.StopPodSandbox(ctx, id); err != nil {
			return fmt.Errorf("StopPodSandbox %s: %w", id, err)
		}
		if err := rt.RemovePodSandbox(ctx, id); err != nil {
			return fmt.Errorf("RemovePodSandbox %s: %w", id, err)
		}
	}
	return nil
}
