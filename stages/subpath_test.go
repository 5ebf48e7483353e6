package stages

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func subPathPod(mounts ...v1.VolumeMount) *v1.Pod {
	return unitPod(func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{
			{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
			{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}},
		}
		p.Spec.Containers[0].VolumeMounts = mounts
	})
}

func TestSubPathBinds(t *testing.T) {
	envs := []*runtimeapi.KeyValue{{Key: "POD", Value: []byte("web")}, {Key: "UP", Value: []byte("..")}}
	f := func(vm v1.VolumeMount, wantRel, wantErr string) {
		t.Helper()
		pod := subPathPod(v1.VolumeMount{Name: "cfg", MountPath: "/etc/cfg"}, vm)
		binds, err := SubPathBinds(pod, &pod.Spec.Containers[0], configNode, envs)
		if wantErr != "" {
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("%+v: error %v, want ErrConfig with %q", vm, err, wantErr)
			}
			return
		}
		if err != nil {
			t.Fatalf("%+v: %v", vm, err)
		}
		if len(binds) != 1 {
			t.Fatalf("%+v: %d binds, want 1", vm, len(binds))
		}
		b := binds[0]
		// The target is named by volume, container and mount index, under
		// the pod directory, as the kubelet lays it out.
		wantTarget := "/var/lib/podline/pods/uid-web/volume-subpaths/" + vm.Name + "/app/1"
		if b.Rel != wantRel || b.Target != wantTarget || b.Base != "/var/lib/podline/pods/uid-web/volumes/kubernetes.io~"+map[string]string{"scratch": "empty-dir", "cfg": "configmap"}[vm.Name]+"/"+vm.Name {
			t.Errorf("%+v: bind %+v, want rel %q, target %q", vm, b, wantRel, wantTarget)
		}
	}
	f(v1.VolumeMount{Name: "scratch", MountPath: "/data", SubPath: "a/b/"}, "a/b", "")
	f(v1.VolumeMount{Name: "scratch", MountPath: "/data", SubPath: "./a"}, "a", "")
	f(v1.VolumeMount{Name: "scratch", MountPath: "/data", SubPath: "..."}, "...", "")
	f(v1.VolumeMount{Name: "cfg", MountPath: "/etc/app.conf", SubPath: "app.conf"}, "app.conf", "")
	f(v1.VolumeMount{Name: "scratch", MountPath: "/data", SubPathExpr: "logs/$(POD)"}, "logs/web", "")
	f(v1.VolumeMount{Name: "scratch", MountPath: "/data", SubPathExpr: "$(MISSING)"}, "$(MISSING)", "")
	f(v1.VolumeMount{Name: "scratch", MountPath: "/data", SubPath: ".."}, "", `subPath of volumeMount "scratch": ".." must not contain '..'`)
	f(v1.VolumeMount{Name: "scratch", MountPath: "/data", SubPath: "a/../.."}, "", "must not contain '..'")
	// Any ".." is refused, even one that stays inside: the API server
	// refuses it too.
	f(v1.VolumeMount{Name: "scratch", MountPath: "/data", SubPath: "a/../b"}, "", "must not contain '..'")
	f(v1.VolumeMount{Name: "scratch", MountPath: "/data", SubPath: "/etc"}, "", "must be a relative path")
	f(v1.VolumeMount{Name: "scratch", MountPath: "/data", SubPathExpr: "$(UP)/x"}, "", `subPathExpr of volumeMount "scratch": "../x" must not contain '..'`)
}

func TestContainerConfigMountsSubPathTarget(t *testing.T) {
	pod := subPathPod(v1.VolumeMount{Name: "scratch", MountPath: "/whole"},
		v1.VolumeMount{Name: "scratch", MountPath: "/part", SubPath: "x"})
	cfg, err := ContainerConfig(pod, StartAction{Spec: &pod.Spec.Containers[0]}, "img", nil, configNode)
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]string{}
	for _, m := range cfg.Mounts {
		hosts[m.ContainerPath] = m.HostPath
	}
	if got := hosts["/whole"]; got != "/var/lib/podline/pods/uid-web/volumes/kubernetes.io~empty-dir/scratch" {
		t.Errorf("whole volume from %q", got)
	}
	// Never the path inside the volume: the runtime would resolve the
	// container's symlinks on the host.
	if got := hosts["/part"]; got != "/var/lib/podline/pods/uid-web/volume-subpaths/scratch/app/1" {
		t.Errorf("subPath mount from %q, want its bind target", got)
	}
}

// TestSubPathPrepareRefusesEscape plants what a container can plant in an
// emptyDir and prepares the mounts as the container stage does.
func TestSubPathPrepareRefusesEscape(t *testing.T) {
	root := t.TempDir()
	node := &Node{Name: "n", RootDir: root}
	t.Cleanup(func() { unmountUnder(root) })
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "secret"), []byte("host"), 0o600); err != nil {
		t.Fatal(err)
	}
	pod := subPathPod()
	vol, _ := VolumeHostPath(node, pod, &pod.Spec.Volumes[0])
	if err := setupEmptyDir(vol, &v1.EmptyDirVolumeSource{}); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/", filepath.Join(vol, "root"))
	os.Symlink(host, filepath.Join(vol, "hostdir"))
	os.Symlink("../../../../../../../../..", filepath.Join(vol, "climb"))
	os.Mkdir(filepath.Join(vol, "ok"), 0o777)
	os.WriteFile(filepath.Join(vol, "ok", "f"), []byte("mine"), 0o644)
	os.Symlink("ok", filepath.Join(vol, "alias"))

	prepare := func(sub string) (string, error) {
		pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "scratch", MountPath: "/m", SubPath: sub}}
		binds, err := SubPathBinds(pod, &pod.Spec.Containers[0], node, nil)
		if err != nil {
			return "", err
		}
		return binds[0].Target, binds[0].Prepare()
	}
	for _, sub := range []string{"root", "root/etc", "hostdir", "hostdir/secret", "hostdir/made", "climb"} {
		_, err := prepare(sub)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "resolves outside the volume") {
			t.Errorf("subPath %q: %v, want a refusal", sub, err)
		}
	}
	if entries, _ := os.ReadDir(host); len(entries) != 1 {
		t.Errorf("a directory was made through a planted link: %v", entries)
	}

	target, err := prepare("alias")
	if err != nil {
		t.Fatalf("a link that stays inside the volume: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(target, "f")); err != nil || string(b) != "mine" {
		t.Errorf("bind target shows %q, %v", b, err)
	}
	if _, err := prepare("new/dir"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(vol, "new", "dir"))
	if err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("made subPath %v, %v; want mode 0777 like its emptyDir", fi, err)
	}
	if err := unmountUnder(root); err != nil {
		t.Fatal(err)
	}
	if mounts, _ := mountsUnder(root); len(mounts) != 0 {
		t.Errorf("teardown left %v mounted", mounts)
	}
}
