package fake

import (
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestImages(t *testing.T) {
	r := newRig(t, Options{Images: []string{"allowed:1", "pause:3"}, Preloaded: []string{"pause:3"}})
	status := func(name string) *runtimeapi.Image {
		t.Helper()
		resp, err := r.img.ImageStatus(r.ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: name}})
		if err != nil {
			t.Fatalf("ImageStatus %s: %v", name, err)
		}
		return resp.Image
	}
	if im := status("pause:3"); im == nil || im.Size == 0 || im.RepoTags[0] != "pause:3" {
		t.Fatalf("preloaded image: %v", im)
	}
	if im := status("allowed:1"); im != nil {
		t.Fatalf("image present before pull: %v", im)
	}
	_, err := r.img.PullImage(r.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "other:1"}})
	wantCode(t, err, codes.NotFound)

	resp, err := r.img.PullImage(r.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "allowed:1"}})
	if err != nil {
		t.Fatal(err)
	}
	im := status("allowed:1")
	if im == nil || im.Id != resp.ImageRef {
		t.Fatalf("after pull: %v, ref %q", im, resp.ImageRef)
	}
	if byRef := status(resp.ImageRef); byRef == nil || byRef.Id != im.Id {
		t.Fatalf("lookup by ref: %v", byRef)
	}

	list, err := r.img.ListImages(r.ctx, &runtimeapi.ListImagesRequest{})
	if err != nil || len(list.Images) != 2 {
		t.Fatalf("ListImages: %v %v", list, err)
	}
	list, err = r.img.ListImages(r.ctx, &runtimeapi.ListImagesRequest{Filter: &runtimeapi.ImageFilter{Image: &runtimeapi.ImageSpec{Image: "pause:3"}}})
	if err != nil || len(list.Images) != 1 || list.Images[0].Spec.Image != "pause:3" {
		t.Fatalf("ListImages filtered: %v %v", list, err)
	}

	fs, err := r.img.ImageFsInfo(r.ctx, &runtimeapi.ImageFsInfoRequest{})
	if err != nil || fs.ImageFilesystems[0].UsedBytes.Value <= im.Size || fs.ImageFilesystems[0].InodesUsed.Value == 0 ||
		fs.ContainerFilesystems[0].UsedBytes.Value == 0 {
		t.Fatalf("ImageFsInfo: %v %v", fs, err)
	}

	for range 2 { // remove is idempotent
		if _, err := r.img.RemoveImage(r.ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: "allowed:1"}}); err != nil {
			t.Fatal(err)
		}
	}
	if im := status("allowed:1"); im != nil {
		t.Fatalf("image present after remove: %v", im)
	}

	// A container reports the id of the image it was created from.
	sb := r.runSandbox(t, sandboxConfig("pod", nil))
	cfg := containerConfig("app", nil)
	cfg.Image.Image = "pause:3"
	if st := r.containerStatus(t, r.createContainer(t, sb, cfg)); st.ImageRef != status("pause:3").Id {
		t.Fatalf("container image ref %q", st.ImageRef)
	}
}

func TestAnyImagePullsByDefault(t *testing.T) {
	r := newRig(t, Options{})
	if _, err := r.img.PullImage(r.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "whatever:9"}}); err != nil {
		t.Fatal(err)
	}
}

// TestImageNames checks that an image is found by any form of its name, as
// containerd resolves them, and that a container created from the image's
// id (as a kubelet creates it) reports the image's name.
func TestImageNames(t *testing.T) {
	const full = "docker.io/library/busybox:1.36"
	r := newRig(t, Options{Preloaded: []string{full, "registry.k8s.io/pause:3.10"}})
	status := func(name string, verbose bool) *runtimeapi.ImageStatusResponse {
		t.Helper()
		resp, err := r.img.ImageStatus(r.ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: name}, Verbose: verbose})
		if err != nil {
			t.Fatalf("ImageStatus %s: %v", name, err)
		}
		return resp
	}
	id := status(full, false).Image.GetId()
	for _, name := range []string{"busybox:1.36", "library/busybox:1.36", "docker.io/busybox:1.36", id} {
		if got := status(name, false).Image.GetId(); got != id {
			t.Fatalf("ImageStatus(%q) = %q, want %q", name, got, id)
		}
	}
	for _, name := range []string{"busybox", "busybox:1.37", "quay.io/busybox:1.36"} {
		if im := status(name, false).Image; im != nil {
			t.Fatalf("ImageStatus(%q) found %v", name, im)
		}
	}
	var info struct{ Name string }
	if err := json.Unmarshal([]byte(status("busybox:1.36", true).Info["info"]), &info); err != nil || info.Name != full {
		t.Fatalf("verbose info %q: %v", info.Name, err)
	}
	if len(status(full, false).Info) != 0 {
		t.Fatal("info without verbose")
	}

	list, err := r.img.ListImages(r.ctx, &runtimeapi.ListImagesRequest{})
	if err != nil || len(list.Images) != 2 {
		t.Fatalf("ListImages lists each image once: %v %v", list, err)
	}
	pull, err := r.img.PullImage(r.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: "busybox:1.36"}})
	if err != nil || pull.ImageRef != id {
		t.Fatalf("pulling a present image by its short name: %v %v", pull, err)
	}

	sb := r.runSandbox(t, sandboxConfig("pod", nil))
	cfg := containerConfig("app", nil)
	cfg.Image = &runtimeapi.ImageSpec{Image: id, UserSpecifiedImage: "busybox:1.36"}
	st := r.containerStatus(t, r.createContainer(t, sb, cfg))
	if st.Image.Image != full || st.Image.UserSpecifiedImage != "busybox:1.36" || st.ImageRef != id {
		t.Fatalf("container image %v ref %q", st.Image, st.ImageRef)
	}

	if _, err := r.img.RemoveImage(r.ctx, &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: "busybox:1.36"}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{full, "busybox:1.36", id} {
		if im := status(name, false).Image; im != nil {
			t.Fatalf("%q still found after remove: %v", name, im)
		}
	}
}

func TestImageAllowList(t *testing.T) {
	r := newRig(t, Options{Images: []string{"docker.io/library/busybox:1.36"}})
	pull := func(name string) error {
		_, err := r.img.PullImage(r.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: name}})
		return err
	}
	wantCode(t, pull("busybox:1.36"), codes.OK)
	wantCode(t, pull("busybox:1.37"), codes.NotFound)
}

func TestPrivateImages(t *testing.T) {
	r := newRig(t, Options{ImageAuth: map[string]string{"r.io/private:1": "u:p"}})
	pull := func(name string, auth *runtimeapi.AuthConfig) error {
		_, err := r.img.PullImage(r.ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: name}, Auth: auth})
		return err
	}
	for _, auth := range []*runtimeapi.AuthConfig{nil, {Username: "u", Password: "wrong"}} {
		err := pull("r.io/private:1", auth)
		wantCode(t, err, codes.Unknown)
		if !strings.Contains(err.Error(), "401 Unauthorized") {
			t.Errorf("refused pull with %v: %v, want the registry's 401", auth, err)
		}
	}
	if err := pull("r.io/private:1", &runtimeapi.AuthConfig{Username: "u", Password: "p"}); err != nil {
		t.Fatalf("pull with the right credentials: %v", err)
	}
	if err := pull("r.io/public:1", nil); err != nil {
		t.Fatalf("image without auth: %v", err)
	}
}
