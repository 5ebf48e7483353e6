package main

import (
	"context"
	"fmt"
	"net"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// benchSandboxes is the runtime's view of the suite's pods (named
// "bench-*"): the sandboxes still ready and all of them.
func benchSandboxes(ctx context.Context, socket string) (ready int, all []string, err error) {
	conn, err := criConn(socket)
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close()
	resp, err := runtimeapi.NewRuntimeServiceClient(conn).ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return 0, nil, fmt.Errorf("ListPodSandbox on %s: %w", socket, err)
	}
	for _, sb := range resp.Items {
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
func removeSandboxes(ctx context.Context, socket string, ids []string) error {
	conn, err := criConn(socket)
	if err != nil {
		return err
	}
	defer conn.Close()
	c := runtimeapi.NewRuntimeServiceClient(conn)
	for _, id := range ids {
		if _, err := c.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id}); err != nil {
			return fmt.Errorf("StopPodSandbox %s: %w", id, err)
		}
		if _, err := c.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id}); err != nil {
			return fmt.Errorf("RemovePodSandbox %s: %w", id, err)
		}
	}
	return nil
}

func criConn(socket string) (*grpc.ClientConn, error) {
	return grpc.NewClient("passthrough:///"+socket,
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		}),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
}
