package cri

import (
	"context"
	"io"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ContainerEvents opens the runtime's container event stream. It has no
// request timeout: it lives until ctx ends or the runtime goes away. Errors
// from Recv are classified like every other call (a runtime without the
// call yields ErrUnimplemented on the first Recv); io.EOF passes unchanged.
func (c *Client) ContainerEvents(ctx context.Context) (runtimeapi.RuntimeService_GetContainerEventsClient, error) {
	stream, err := invoke(ctx, opGetContainerEvents, "", 0, c.runtime.GetContainerEvents, &runtimeapi.GetEventsRequest{})
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
