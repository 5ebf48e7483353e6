package cri

import (
	"context"
	"io"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ContainerEvents opens the runtime's container event stream. It has no
// request timeout: it lives until ctx ends or the runtime goes away. Errors
// from Recv are classified like every other call (a runtime without the
// call yields ErrUnimplemented on the first Recv); io.EOF passes unchanged.
//
// While the runtime is unreachable the open waits for the connection to
// come back, until ctx ends, instead of failing: the stream then opens as
// soon as the runtime answers, not at the end of its caller's reconnect
// back-off. Its reconnection is what releases the pods held back by the
// outage, and at 100 real pods a containerd restart waited 4–6 s for it
// after containerd answered.
func (c *Client) ContainerEvents(ctx context.Context) (runtimeapi.RuntimeService_GetContainerEventsClient, error) {
	open := func(ctx context.Context, req *runtimeapi.GetEventsRequest, opts ...grpc.CallOption) (runtimeapi.RuntimeService_GetContainerEventsClient, error) {
		return c.runtime.GetContainerEvents(ctx, req, append(opts, grpc.WaitForReady(true))...)
	}
	stream, err := invoke(ctx, opGetContainerEvents, "", 0, open, &runtimeapi.GetEventsRequest{})
	if err != nil {
		return nil, err
	}
	return eventStream{stream}, nil
}

type eventStream struct {
	runtimeapi.RuntimeService_GetContainerEventsClient
}

func (s eventStream) Recv() (*runtimeapi.ContainerEventResponse, error) {
	ev, err := s.RuntimeService_GetContainerEventsClient.Recv()
	if err != nil && err != io.EOF {
		return nil, newOpError(opGetContainerEvents.name, "recv", err)
	}
	return ev, err
}
