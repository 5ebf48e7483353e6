package fake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Images are names only: no layers, no registry. An image's id is derived
// from its name, so the same name gets the same id in every run.

const (
	imageFsMount        = "/var/lib/podline-fake/images"
	containerFsMount    = "/var/lib/podline-fake/containers"
	writableLayerBytes  = 64 << 10
	writableLayerInodes = 16
)

type image struct {
	id   string
	name string
	size uint64
}

func imageID(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "sha256:" + hex.EncodeToString(sum[:])
}

func (im *image) api() *runtimeapi.Image {
	return &runtimeapi.Image{
		Id:          im.id,
		RepoTags:    []string{im.name},
		RepoDigests: []string{im.name + "@" + im.id},
		Size:        im.size,
		Spec:        &runtimeapi.ImageSpec{Image: im.name},
	}
}

func (s *Server) addImageLocked(name string) *image {
	if im := s.images[name]; im != nil {
		return im
	}
	im := &image{id: imageID(name), name: name, size: (2 + hashOf(name)%48) << 20}
	s.images[name] = im
	s.images[im.id] = im
	return im
}

// imageRefLocked is what a container created from name reports as its
// image: the pulled image's id, or the id it would have.
func (s *Server) imageRefLocked(name string) string {
	if im := s.images[name]; im != nil {
		return im.id
	}
	return imageID(name)
}

func (s *Server) PullImage(_ context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	name := req.GetImage().GetImage()
	if name == "" {
		return nil, status.Error(codes.InvalidArgument, "image name is empty")
	}
	if len(s.opts.Images) > 0 && !slices.Contains(s.opts.Images, name) {
		return nil, status.Errorf(codes.NotFound, "pull access denied for %q: repository does not exist", name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return &runtimeapi.PullImageResponse{ImageRef: s.addImageLocked(name).id}, nil
}

func (s *Server) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if im := s.images[req.GetImage().GetImage()]; im != nil {
		return &runtimeapi.ImageStatusResponse{Image: im.api()}, nil
	}
	return &runtimeapi.ImageStatusResponse{}, nil
}

func (s *Server) ListImages(_ context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	want := req.GetFilter().GetImage().GetImage()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*runtimeapi.Image
	for key, im := range s.images {
		if key != im.name { // each image is indexed twice; list it once
			continue
		}
		if want == "" || want == im.name || want == im.id {
			out = append(out, im.api())
		}
	}
	return &runtimeapi.ListImagesResponse{Images: out}, nil
}

// RemoveImage removes by name or id; an absent image is not an error.
func (s *Server) RemoveImage(_ context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if im := s.images[req.GetImage().GetImage()]; im != nil {
		delete(s.images, im.name)
		delete(s.images, im.id)
	}
	return &runtimeapi.RemoveImageResponse{}, nil
}

func (s *Server) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	now := time.Now().UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	// A base for what any runtime keeps besides images and layers.
	imageBytes, imageInodes := uint64(32<<20), uint64(1000)
	for key, im := range s.images {
		if key == im.name {
			imageBytes += im.size
			imageInodes += 500
		}
	}
	n := uint64(len(s.containers))
	return &runtimeapi.ImageFsInfoResponse{
		ImageFilesystems: []*runtimeapi.FilesystemUsage{{
			Timestamp: now, FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: imageFsMount},
			UsedBytes: u64(imageBytes), InodesUsed: u64(imageInodes),
		}},
		ContainerFilesystems: []*runtimeapi.FilesystemUsage{{
			Timestamp: now, FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: containerFsMount},
			UsedBytes: u64(1<<20 + n*writableLayerBytes), InodesUsed: u64(100 + n*writableLayerInodes),
		}},
	}, nil
}
