package fake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"runtime"
	"slices"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Images are names only: no layers, no registry. An image's id is derived
// from its name, so the same name gets the same id in every run. An image
// is found by its name, its id, or any short form of its name
// ("busybox:1.36" finds docker.io/library/busybox:1.36).

const (
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
	if im := s.findImageLocked(name); im != nil {
		return im
	}
	im := &image{id: imageID(name), name: name, size: (2 + hashOf(name)%48) << 20}
	s.images[name] = im
	s.images[im.id] = im
	if full := normalizeRef(name); full != name {
		s.images[full] = im
	}
	return im
}

// findImageLocked looks ref up as given (a name or an id), then in its
// normalized form.
func (s *Server) findImageLocked(ref string) *image {
	if im := s.images[ref]; im != nil {
		return im
	}
	return s.images[normalizeRef(ref)]
}

func (s *Server) removeImageLocked(im *image) {
	for _, key := range []string{im.name, im.id, normalizeRef(im.name)} {
		if s.images[key] == im {
			delete(s.images, key)
		}
	}
}

// allowed reports whether PullImage may pull name.
func (s *Server) allowed(name string) bool {
	if len(s.opts.Images) == 0 {
		return true
	}
	full := normalizeRef(name)
	return slices.ContainsFunc(s.opts.Images, func(a string) bool { return a == name || normalizeRef(a) == full })
}

// requiredAuth returns the "user:password" a private image needs.
func (s *Server) requiredAuth(name string) (string, bool) {
	full := normalizeRef(name)
	for img, auth := range s.opts.ImageAuth {
		if img == name || normalizeRef(img) == full {
			return auth, true
		}
	}
	return "", false
}

func (s *Server) PullImage(_ context.Context, req *runtimeapi.PullImageRequest) (*runtimeapi.PullImageResponse, error) {
	name := req.GetImage().GetImage()
	if name == "" {
		return nil, status.Error(codes.InvalidArgument, "image name is empty")
	}
	if !s.allowed(name) {
		return nil, status.Errorf(codes.NotFound, "pull access denied for %q: repository does not exist", name)
	}
	if want, private := s.requiredAuth(name); private {
		auth := req.GetAuth()
		if auth.GetUsername()+":"+auth.GetPassword() != want {
			return nil, status.Errorf(codes.Unknown, "failed to pull and unpack image %q: failed to resolve reference %q: unexpected status from HEAD request: 401 Unauthorized", normalizeRef(name), normalizeRef(name))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return &runtimeapi.PullImageResponse{ImageRef: s.addImageLocked(name).id}, nil
}

// ImageStatus answers an absent image with no image and no error, as the
// CRI asks; verbose adds the image's config as JSON under "info".
func (s *Server) ImageStatus(_ context.Context, req *runtimeapi.ImageStatusRequest) (*runtimeapi.ImageStatusResponse, error) {
	s.mu.Lock()
	im := s.findImageLocked(req.GetImage().GetImage())
	s.mu.Unlock()
	if im == nil {
		return &runtimeapi.ImageStatusResponse{}, nil
	}
	resp := &runtimeapi.ImageStatusResponse{Image: im.api()}
	if req.GetVerbose() {
		info, _ := json.Marshal(map[string]any{
			"imageSpec": map[string]any{"os": "linux", "architecture": runtime.GOARCH},
			"chainID":   im.id, "size": im.size, "name": im.name,
		})
		resp.Info = map[string]string{"info": string(info)}
	}
	return resp, nil
}

func (s *Server) ListImages(_ context.Context, req *runtimeapi.ListImagesRequest) (*runtimeapi.ListImagesResponse, error) {
	want := req.GetFilter().GetImage().GetImage()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*runtimeapi.Image
	for key, im := range s.images {
		if key != im.name { // each image is indexed under several keys; list it once
			continue
		}
		if want == "" || want == im.name || want == im.id || normalizeRef(want) == normalizeRef(im.name) {
			out = append(out, im.api())
		}
	}
	return &runtimeapi.ListImagesResponse{Images: out}, nil
}

// RemoveImage removes by name or id; an absent image is not an error.
func (s *Server) RemoveImage(_ context.Context, req *runtimeapi.RemoveImageRequest) (*runtimeapi.RemoveImageResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if im := s.findImageLocked(req.GetImage().GetImage()); im != nil {
		s.removeImageLocked(im)
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
			Timestamp: now, FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: s.opts.FsMountpoint},
			UsedBytes: u64(imageBytes), InodesUsed: u64(imageInodes),
		}},
		ContainerFilesystems: []*runtimeapi.FilesystemUsage{{
			Timestamp: now, FsId: &runtimeapi.FilesystemIdentifier{Mountpoint: s.opts.FsMountpoint},
			UsedBytes: u64(1<<20 + n*writableLayerBytes), InodesUsed: u64(100 + n*writableLayerInodes),
		}},
	}, nil
}
