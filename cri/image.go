package cri

import (
	"context"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// PullImage pulls image and returns the runtime's reference to it. It has no
// request timeout (large pulls take minutes); ctx bounds it.
func (c *Client) PullImage(ctx context.Context, image string, auth *runtimeapi.AuthConfig, sandboxCfg *runtimeapi.PodSandboxConfig) (string, error) {
	resp, err := invoke(ctx, opPullImage, image, 0, c.image.PullImage, &runtimeapi.PullImageRequest{
		Image: &runtimeapi.ImageSpec{Image: image}, Auth: auth, SandboxConfig: sandboxCfg,
	})
	if err != nil {
		return "", err
	}
	return resp.ImageRef, nil
}

// ImageStatus returns the image, or (nil, nil) when it is not present.
func (c *Client) ImageStatus(ctx context.Context, image string) (*runtimeapi.Image, error) {
	resp, err := invoke(ctx, opImageStatus, image, c.timeout, c.image.ImageStatus,
		&runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	if err != nil {
		return nil, err
	}
	return resp.Image, nil
}

// ListImages lists images matching filter (nil lists all).
func (c *Client) ListImages(ctx context.Context, filter *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error) {
	resp, err := invoke(ctx, opListImages, "", c.timeout, c.image.ListImages,
		&runtimeapi.ListImagesRequest{Filter: filter})
	if err != nil {
		return nil, err
	}
	return resp.Images, nil
}

// RemoveImage removes image. Removing an absent image succeeds.
func (c *Client) RemoveImage(ctx context.Context, image string) error {
	_, err := invoke(ctx, opRemoveImage, image, c.timeout, c.image.RemoveImage,
		&runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: image}})
	return err
}

// ImageFsInfo returns usage of the filesystems holding images and
// containers' writable layers.
func (c *Client) ImageFsInfo(ctx context.Context) (*runtimeapi.ImageFsInfoResponse, error) {
	return invoke(ctx, opImageFsInfo, "", c.timeout, c.image.ImageFsInfo, &runtimeapi.ImageFsInfoRequest{})
}
