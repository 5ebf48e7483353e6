package fake

import (
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The Stream* calls are the streaming forms of the list calls (the
// kubelet's CRIListStreaming): the same answer, sent in chunks so that no
// single message outgrows a client's receive limit however many pods the
// node holds. Each list is taken at one instant, under one lock, like its
// unary form.

// streamChunk is how many items each streamed message carries; at a few
// hundred bytes per item a chunk stays far below gRPC's 4 MiB default.
const streamChunk = 1000

func sendChunks[T any](items []T, send func([]T) error) error {
	for len(items) > 0 {
		n := min(len(items), streamChunk)
		if err := send(items[:n]); err != nil {
			return err
		}
		items = items[n:]
	}
	return nil
}

func (s *Server) StreamPodSandboxes(req *runtimeapi.StreamPodSandboxesRequest, srv runtimeapi.RuntimeService_StreamPodSandboxesServer) error {
	resp, err := s.ListPodSandbox(srv.Context(), &runtimeapi.ListPodSandboxRequest{Filter: req.Filter})
	if err != nil {
		return err
	}
	return sendChunks(resp.Items, func(items []*runtimeapi.PodSandbox) error {
		return srv.Send(&runtimeapi.StreamPodSandboxesResponse{PodSandboxes: items})
	})
}

func (s *Server) StreamContainers(req *runtimeapi.StreamContainersRequest, srv runtimeapi.RuntimeService_StreamContainersServer) error {
	resp, err := s.ListContainers(srv.Context(), &runtimeapi.ListContainersRequest{Filter: req.Filter})
	if err != nil {
		return err
	}
	return sendChunks(resp.Containers, func(items []*runtimeapi.Container) error {
		return srv.Send(&runtimeapi.StreamContainersResponse{Containers: items})
	})
}

func (s *Server) StreamContainerStats(req *runtimeapi.StreamContainerStatsRequest, srv runtimeapi.RuntimeService_StreamContainerStatsServer) error {
	resp, err := s.ListContainerStats(srv.Context(), &runtimeapi.ListContainerStatsRequest{Filter: req.Filter})
	if err != nil {
		return err
	}
	return sendChunks(resp.Stats, func(items []*runtimeapi.ContainerStats) error {
		return srv.Send(&runtimeapi.StreamContainerStatsResponse{ContainerStats: items})
	})
}

func (s *Server) StreamPodSandboxStats(req *runtimeapi.StreamPodSandboxStatsRequest, srv runtimeapi.RuntimeService_StreamPodSandboxStatsServer) error {
	resp, err := s.ListPodSandboxStats(srv.Context(), &runtimeapi.ListPodSandboxStatsRequest{Filter: req.Filter})
	if err != nil {
		return err
	}
	return sendChunks(resp.Stats, func(items []*runtimeapi.PodSandboxStats) error {
		return srv.Send(&runtimeapi.StreamPodSandboxStatsResponse{PodSandboxStats: items})
	})
}

// StreamPodSandboxMetrics sends nothing, as ListPodSandboxMetrics lists
// nothing.
func (s *Server) StreamPodSandboxMetrics(*runtimeapi.StreamPodSandboxMetricsRequest, runtimeapi.RuntimeService_StreamPodSandboxMetricsServer) error {
	return nil
}

func (s *Server) StreamImages(req *runtimeapi.StreamImagesRequest, srv runtimeapi.ImageService_StreamImagesServer) error {
	resp, err := s.ListImages(srv.Context(), &runtimeapi.ListImagesRequest{Filter: req.Filter})
	if err != nil {
		return err
	}
	return sendChunks(resp.Images, func(items []*runtimeapi.Image) error {
		return srv.Send(&runtimeapi.StreamImagesResponse{Images: items})
	})
}
