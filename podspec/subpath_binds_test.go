package podspec

import (
	"errors"
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
	cfg, err := ContainerConfig(pod, Instance{Spec: &pod.Spec.Containers[0]}, "img", nil, configNode)
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
