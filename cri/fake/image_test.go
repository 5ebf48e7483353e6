package fake

import (
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
