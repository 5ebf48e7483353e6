package stages

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/podspec"
)

// imageUsers answers ImageStatus with the images it holds, by reference,
// and counts the calls.
type imageUsers struct {
	images map[string]*runtimeapi.Image
	err    error
	calls  int
}

func (f *imageUsers) ImageStatus(_ context.Context, image string) (*runtimeapi.Image, error) {
	f.calls++
	return f.images[image], f.err
}

func (f *imageUsers) PullImage(context.Context, string, *runtimeapi.AuthConfig, *runtimeapi.PodSandboxConfig) (string, error) {
	return "", errors.New("no pulls here")
}

func TestCheckContainerUser(t *testing.T) {
	images := &imageUsers{images: map[string]*runtimeapi.Image{
		"sha256:root":     {Id: "sha256:root"},
		"sha256:uid0":     {Id: "sha256:uid0", Uid: &runtimeapi.Int64Value{Value: 0}},
		"sha256:uid1000":  {Id: "sha256:uid1000", Uid: &runtimeapi.Int64Value{Value: 1000}},
		"sha256:nobody":   {Id: "sha256:nobody", Username: "nobody"},
		"sha256:name1000": {Id: "sha256:name1000", Username: "1000"},
	}}
	// f checks one container: the error it ends with ("" for none), how
	// many times the image's user was read, and the user the runtime is
	// given.
	f := func(name string, psc *v1.PodSecurityContext, sc *v1.SecurityContext, imageRef, wantErr string, wantCalls int, wantUser *runtimeapi.Int64Value) {
		t.Helper()
		pod := unitPod(func(p *v1.Pod) {
			p.Spec.SecurityContext = psc
			p.Spec.Containers[0].SecurityContext = sc
		})
		spec := &pod.Spec.Containers[0]
		cfg, err := podspec.ContainerConfig(pod, podspec.Instance{Spec: spec}, imageRef, nil, &Node{Name: "node-a", RootDir: "/var/lib/podline"})
		if err != nil {
			t.Fatal(err)
		}
		images.calls = 0
		sec := cfg.GetLinux().GetSecurityContext()
		err = checkContainerUser(context.Background(), images, pod, spec, imageRef, sec)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != wantErr || images.calls != wantCalls {
			t.Errorf("%s: error %q after %d image reads, want %q after %d", name, got, images.calls, wantErr, wantCalls)
		}
		if err == nil && !proto.Equal(sec.GetRunAsUser(), wantUser) {
			t.Errorf("%s: runs as %v, want %v", name, sec.GetRunAsUser(), wantUser)
		}
	}
	nonRoot := &v1.PodSecurityContext{RunAsNonRoot: ptrOf(true)}
	const (
		asRoot = `container has runAsNonRoot and image will run as root (pod: "web_default(uid-web)", container: app)`
		breaks = `container's runAsUser breaks non-root policy (pod: "web_default(uid-web)", container: app)`
	)
	uid := func(v int64) *runtimeapi.Int64Value { return &runtimeapi.Int64Value{Value: v} }

	f("nothing asked: no image read", nil, nil, "sha256:root", "", 0, nil)
	f("image without USER", nonRoot, nil, "sha256:root", asRoot, 1, nil)
	f("image uid 0", nonRoot, nil, "sha256:uid0", asRoot, 1, nil)
	f("image uid 1000: the runtime reads the image itself", nonRoot, nil, "sha256:uid1000", "", 1, nil)
	f("image user nobody", nonRoot, nil, "sha256:nobody",
		`container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root (pod: "web_default(uid-web)", container: app)`, 1, nil)
	f("image user name 1000", nonRoot, nil, "sha256:name1000",
		`container has runAsNonRoot and image has non-numeric user (1000), cannot verify user is non-root (pod: "web_default(uid-web)", container: app)`, 1, nil)
	f("an image the runtime does not know", nonRoot, nil, "sha256:gone", asRoot, 1, nil)
	f("runAsUser 1000 overrides the image: no read", nonRoot, &v1.SecurityContext{RunAsUser: ptrOf(int64(1000))}, "sha256:root", "", 0, uid(1000))
	f("runAsUser 0", &v1.PodSecurityContext{RunAsNonRoot: ptrOf(true), RunAsUser: ptrOf(int64(0))}, nil, "sha256:uid1000", breaks, 0, nil)
	f("a group alone takes the image's uid", nil, &v1.SecurityContext{RunAsGroup: ptrOf(int64(3000))}, "sha256:uid1000", "", 1, uid(1000))
	f("a group alone on a root image", &v1.PodSecurityContext{RunAsGroup: ptrOf(int64(3000))}, nil, "sha256:root", "", 1, uid(0))
	f("an unusable context is refused before any read", nonRoot, &v1.SecurityContext{ProcMount: ptrOf(v1.UnmaskedProcMount)}, "sha256:uid1000",
		"procMount Unmasked needs a user namespace of the pod's own (hostUsers: false), which podline does not create", 0, nil)

	images.err = errors.New("runtime down")
	f("the image cannot be read", nonRoot, nil, "sha256:uid1000", "read the user of image sha256:uid1000: runtime down", 1, nil)
}
