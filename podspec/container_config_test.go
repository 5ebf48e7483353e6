package podspec

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
)

var configNode = &Node{Name: "node-a", IPs: []string{"192.0.2.10"}, CPUMilli: 4000, MemoryBytes: 8 << 30,
	RootDir: "/var/lib/podline", LogsDir: "/var/log/pods"}

func TestContainerConfig(t *testing.T) {
	pod := unitPod(func(p *v1.Pod) {
		p.Labels = map[string]string{"app": "web"}
		c := &p.Spec.Containers[0]
		c.Command = []string{"/bin/sh", "-c", "echo $(GREETING) $$(HOME)"}
		c.Args = []string{"--name=$(POD)", "$(MISSING)"}
		c.WorkingDir = "/srv"
		c.Stdin, c.StdinOnce, c.TTY = true, true, true
		c.Env = []v1.EnvVar{{Name: "GREETING", Value: "hi"}, envField("POD", "metadata.name")}
	})
	spec := &pod.Spec.Containers[0]
	cfg, err := ContainerConfig(pod, Instance{Spec: spec, Attempt: 3}, "sha256:0123", []string{"10.88.0.5"}, configNode)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %#v, want %#v", what, got, want)
		}
	}
	check("name", cfg.GetMetadata().GetName(), "app")
	check("attempt", cfg.GetMetadata().GetAttempt(), uint32(3))
	check("image", cfg.GetImage().GetImage(), "sha256:0123")
	check("user image", cfg.GetImage().GetUserSpecifiedImage(), "busybox:1.36")
	check("command", cfg.GetCommand(), []string{"/bin/sh", "-c", "echo hi $(HOME)"})
	check("args", cfg.GetArgs(), []string{"--name=web", "$(MISSING)"})
	check("workingDir", cfg.GetWorkingDir(), "/srv")
	check("stdin/stdinOnce/tty", []bool{cfg.GetStdin(), cfg.GetStdinOnce(), cfg.GetTty()}, []bool{true, true, true})
	check("labels", cfg.GetLabels(), map[string]string{
		cri.LabelPodName: "web", cri.LabelPodNamespace: "default", cri.LabelPodUID: "uid-web", cri.LabelContainerName: "app",
	})
	check("annotations", cfg.GetAnnotations(), map[string]string{
		cri.AnnotationContainerHash:    HashContainer(spec),
		cri.AnnotationRestartCount:     "3",
		cri.AnnotationTerminationGrace: "30",
	})
	check("log path", cfg.GetLogPath(), "app/3.log")
	check("envs", len(cfg.GetEnvs()), 2)
	if cfg.GetLinux().GetResources() == nil || cfg.GetLinux().GetSecurityContext().GetNamespaceOptions() == nil {
		t.Errorf("linux config incomplete: %s", prototext.Format(cfg.GetLinux()))
	}

	initCfg, err := ContainerConfig(pod, Instance{Spec: spec, Init: true}, "sha256:0123", nil, configNode)
	if err != nil {
		t.Fatal(err)
	}
	check("init annotation", initCfg.GetAnnotations()[cri.AnnotationInitContainer], "true")
	check("first attempt log path", initCfg.GetLogPath(), "app/0.log")
	check("first attempt restart count", initCfg.GetAnnotations()[cri.AnnotationRestartCount], "0")
}

func TestContainerConfigGracePeriod(t *testing.T) {
	f := func(name string, spec, deletion *int64, want string) {
		t.Helper()
		pod := unitPod(func(p *v1.Pod) {
			p.Spec.TerminationGracePeriodSeconds = spec
			p.DeletionGracePeriodSeconds = deletion
		})
		cfg, err := ContainerConfig(pod, Instance{Spec: &pod.Spec.Containers[0]}, "img", nil, configNode)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.GetAnnotations()[cri.AnnotationTerminationGrace]; got != want {
			t.Errorf("%s: grace %s, want %s", name, got, want)
		}
	}
	f("default", nil, nil, "30")
	f("from the spec", ptrOf(int64(5)), nil, "5")
	f("zero in the spec", ptrOf(int64(0)), nil, "0")
	f("a deletion's grace wins", ptrOf(int64(5)), ptrOf(int64(1)), "1")
}

func TestContainerConfigMounts(t *testing.T) {
	host := v1.HostPathDirectory
	pod := unitPod(func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{
			{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
			{Name: "logs", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/var/log/app", Type: &host}}},
			{Name: "cfg", VolumeSource: v1.VolumeSource{NFS: &v1.NFSVolumeSource{}}},
		}
	})
	emptyDir := "/var/lib/podline/pods/uid-web/volumes/kubernetes.io~empty-dir/scratch"
	f := func(name string, vm v1.VolumeMount, want *runtimeapi.Mount) {
		t.Helper()
		pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{vm}
		cfg, err := ContainerConfig(pod, Instance{Spec: &pod.Spec.Containers[0]}, "img", nil, configNode)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(cfg.GetMounts()) != 1 || !proto.Equal(cfg.GetMounts()[0], want) {
			t.Errorf("%s:\n got %v\nwant %s", name, cfg.GetMounts(), prototext.Format(want))
		}
	}
	private := runtimeapi.MountPropagation_PROPAGATION_PRIVATE
	mode := func(m v1.MountPropagationMode) *v1.MountPropagationMode { return &m }

	f("emptyDir", v1.VolumeMount{Name: "scratch", MountPath: "/tmp"},
		&runtimeapi.Mount{ContainerPath: "/tmp", HostPath: emptyDir, Propagation: private})
	f("hostPath, read-only", v1.VolumeMount{Name: "logs", MountPath: "/logs", ReadOnly: true},
		&runtimeapi.Mount{ContainerPath: "/logs", HostPath: "/var/log/app", Readonly: true, Propagation: private})
	// subPath mounts come from their bind target (see SubPathBind).
	f("subPath", v1.VolumeMount{Name: "scratch", MountPath: "/data", SubPath: "a/b"},
		&runtimeapi.Mount{ContainerPath: "/data", HostPath: "/var/lib/podline/pods/uid-web/volume-subpaths/scratch/app/0", Propagation: private})
	f("subPath named like a parent but not one", v1.VolumeMount{Name: "logs", MountPath: "/x", SubPath: "..data"},
		&runtimeapi.Mount{ContainerPath: "/x", HostPath: "/var/lib/podline/pods/uid-web/volume-subpaths/logs/app/0", Propagation: private})
	f("propagation HostToContainer", v1.VolumeMount{Name: "logs", MountPath: "/x", MountPropagation: mode(v1.MountPropagationHostToContainer)},
		&runtimeapi.Mount{ContainerPath: "/x", HostPath: "/var/log/app", Propagation: runtimeapi.MountPropagation_PROPAGATION_HOST_TO_CONTAINER})
	f("propagation Bidirectional", v1.VolumeMount{Name: "logs", MountPath: "/x", MountPropagation: mode(v1.MountPropagationBidirectional)},
		&runtimeapi.Mount{ContainerPath: "/x", HostPath: "/var/log/app", Propagation: runtimeapi.MountPropagation_PROPAGATION_BIDIRECTIONAL})
	f("propagation None", v1.VolumeMount{Name: "logs", MountPath: "/x", MountPropagation: mode(v1.MountPropagationNone)},
		&runtimeapi.Mount{ContainerPath: "/x", HostPath: "/var/log/app", Propagation: private})
	rro := func(m v1.RecursiveReadOnlyMode) *v1.RecursiveReadOnlyMode { return &m }
	f("recursiveReadOnly Enabled", v1.VolumeMount{Name: "logs", MountPath: "/x", ReadOnly: true, RecursiveReadOnly: rro(v1.RecursiveReadOnlyEnabled)},
		&runtimeapi.Mount{ContainerPath: "/x", HostPath: "/var/log/app", Readonly: true, RecursiveReadOnly: true, Propagation: private})
	f("recursiveReadOnly IfPossible", v1.VolumeMount{Name: "logs", MountPath: "/x", ReadOnly: true, RecursiveReadOnly: rro(v1.RecursiveReadOnlyIfPossible)},
		&runtimeapi.Mount{ContainerPath: "/x", HostPath: "/var/log/app", Readonly: true, Propagation: private})

	bad := func(name string, vm v1.VolumeMount, wantMsg string) {
		t.Helper()
		pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{vm}
		_, err := ContainerConfig(pod, Instance{Spec: &pod.Spec.Containers[0]}, "img", nil, configNode)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), wantMsg) {
			t.Errorf("%s: error %v, want ErrConfig mentioning %q", name, err, wantMsg)
		}
	}
	bad("no such volume", v1.VolumeMount{Name: "nope", MountPath: "/x"}, `volumeMount "nope": no volume of that name`)
	bad("unsupported volume type", v1.VolumeMount{Name: "cfg", MountPath: "/x"}, `volume "cfg": unsupported volume type`)
	bad("subPath escaping", v1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: "../other"}, "must not contain '..'")
	bad("subPath escaping after a detour", v1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: "a/../../other"}, "must not contain '..'")
	bad("subPath of the parent itself", v1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: ".."}, "must not contain '..'")
	bad("recursiveReadOnly without readOnly", v1.VolumeMount{Name: "logs", MountPath: "/x", RecursiveReadOnly: rro(v1.RecursiveReadOnlyEnabled)}, "only be set with readOnly: true")
	bad("recursiveReadOnly with propagation", v1.VolumeMount{Name: "logs", MountPath: "/x", ReadOnly: true, RecursiveReadOnly: rro(v1.RecursiveReadOnlyEnabled),
		MountPropagation: mode(v1.MountPropagationHostToContainer)}, "needs mountPropagation None")
	bad("absolute subPath", v1.VolumeMount{Name: "scratch", MountPath: "/x", SubPath: "/etc"}, "must be a relative path")
}

func TestContainerConfigErrorFromEnv(t *testing.T) {
	pod := unitPod(func(p *v1.Pod) { p.Spec.Containers[0].Env = []v1.EnvVar{envField("X", "spec.unknown")} })
	_, err := ContainerConfig(pod, Instance{Spec: &pod.Spec.Containers[0]}, "img", nil, configNode)
	if !errors.Is(err, ErrConfig) {
		t.Errorf("error %v, want ErrConfig", err)
	}
}

func TestContentVolumesMountReadOnly(t *testing.T) {
	pod := unitPod()
	pod.Spec.Volumes = []v1.Volume{
		{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}},
		{Name: "token", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{}}},
		{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
	}
	pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{
		{Name: "cfg", MountPath: "/etc/cfg"}, {Name: "token", MountPath: "/var/run/secrets"}, {Name: "scratch", MountPath: "/tmp"},
	}
	cfg, err := ContainerConfig(pod, Instance{Spec: &pod.Spec.Containers[0]}, "img", nil, configNode)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"/etc/cfg": true, "/var/run/secrets": true, "/tmp": false}
	found := 0
	for _, m := range cfg.Mounts {
		if ro, ok := want[m.ContainerPath]; ok {
			found++
			if m.Readonly != ro {
				t.Errorf("%s: read-only %v, want %v", m.ContainerPath, m.Readonly, ro)
			}
		}
	}
	if found != len(want) {
		t.Fatalf("found %d of the %d volume mounts in %+v", found, len(want), cfg.Mounts)
	}
}
