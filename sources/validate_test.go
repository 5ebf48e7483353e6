package sources

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// uidMessage is how a UID that cannot be one path element is refused.
const uidMessage = "a pod UID must consist of alphanumeric characters, '-', '_' or '.', and must not start with '.' (it names the pod's directory, log directory and cgroup)"

func TestValidate(t *testing.T) {
	// f applies change to a valid defaulted pod and expects exactly want.
	f := func(name string, change func(p *v1.Pod), defaults bool, want ...string) {
		t.Helper()
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "web-node1", Namespace: "default", UID: "0b5c8f5e-8ed6-4cf5-9c1a-3f6b3b1c2d4e"},
			Spec: v1.PodSpec{
				Volumes:    []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}},
				Containers: []v1.Container{{Name: "main", Image: "nginx:1.27", VolumeMounts: []v1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			},
		}
		change(p)
		if defaults {
			ApplyDefaults(p)
		}
		var got []string
		for _, e := range Validate(p) {
			got = append(got, e.Error())
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n got: %q\nwant: %q", name, got, want)
		}
	}
	type P = *v1.Pod
	c0 := func(p P) *v1.Container { return &p.Spec.Containers[0] }

	f("valid", func(P) {}, true)
	f("name required", func(p P) { p.Name = "" }, true, "metadata.name: Required value")
	f("name subdomain", func(p P) { p.Name = "Web_1" }, true,
		`metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`)
	f("namespace label", func(p P) { p.Namespace = "kube.system" }, true,
		`metadata.namespace: Invalid value: "kube.system": must not contain dots`)
	f("uid left to the merger", func(p P) { p.UID = "" }, true)
	f("uid of a static pod", func(p P) { p.UID = "6a5c1b3f0e9d8c7b6a5f4e3d2c1b0a99" }, true)
	f("uid in capitals", func(p P) { p.UID = "0B5C8F5E-8ED6-4CF5-9C1A-3F6B3B1C2D4E" }, true)
	f("uid an author wrote", func(p P) { p.UID = "my_static.pod-1" }, true)
	f("uid of 128 characters", func(p P) { p.UID = types.UID(strings.Repeat("a", 128)) }, true)
	f("uid of 129 characters", func(p P) { p.UID = types.UID(strings.Repeat("a", 129)) }, true,
		`metadata.uid: Invalid value: "`+strings.Repeat("a", 129)+`": must be no more than 128 characters`)
	for _, uid := range []string{"x/../../../../etc", "..", ".", ".hidden", "a/b", "/abs", "sp ace", "tab\t", "nul\x00", "colon:1", "ünï"} {
		f("uid "+uid, func(p P) { p.UID = types.UID(uid) }, true,
			fmt.Sprintf("metadata.uid: Invalid value: %q: %s", uid, uidMessage))
	}
	f("bad label", func(p P) { p.Labels = map[string]string{"app": "a b"} }, true,
		`metadata.labels: Invalid value: "a b": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`)
	f("no containers", func(p P) { p.Spec.Containers = nil }, true, "spec.containers: Required value")
	f("image required", func(p P) { c0(p).Image = "" }, true, "spec.containers[0].image: Required value")
	f("image whitespace", func(p P) { c0(p).Image = " nginx" }, true,
		`spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace`)
	f("container name required", func(p P) { c0(p).Name = "" }, true, "spec.containers[0].name: Required value")
	f("container name label", func(p P) { c0(p).Name = "Main" }, true,
		`spec.containers[0].name: Invalid value: "Main": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`)
	f("names unique across init and regular", func(p P) {
		p.Spec.InitContainers = []v1.Container{{Name: "main", Image: "busybox"}}
	}, true, `spec.containers[0].name: Duplicate value: "main"`)
	f("init container restartPolicy", func(p P) {
		p.Spec.InitContainers = []v1.Container{{Name: "side", Image: "busybox", RestartPolicy: ptrTo(v1.ContainerRestartPolicyNever)}}
	}, true, `spec.initContainers[0].restartPolicy: Unsupported value: "Never": supported values: "Always"`)
	probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
	f("init container probes and hooks", func(p P) {
		p.Spec.InitContainers = []v1.Container{{Name: "setup", Image: "busybox", LivenessProbe: probe, StartupProbe: probe,
			Lifecycle: &v1.Lifecycle{PostStart: &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}}}
	}, true,
		"spec.initContainers[0].lifecycle: Forbidden: may not be set for init containers without restartPolicy=Always",
		"spec.initContainers[0].livenessProbe: Forbidden: may not be set for init containers without restartPolicy=Always",
		"spec.initContainers[0].startupProbe: Forbidden: may not be set for init containers without restartPolicy=Always")
	f("sidecar probes", func(p P) {
		p.Spec.InitContainers = []v1.Container{{Name: "proxy", Image: "busybox", RestartPolicy: ptrTo(v1.ContainerRestartPolicyAlways),
			LivenessProbe: probe, ReadinessProbe: probe, StartupProbe: probe}}
	}, true)
	f("regular container restartPolicy", func(p P) { c0(p).RestartPolicy = ptrTo(v1.ContainerRestartPolicyAlways) }, true,
		"spec.containers[0].restartPolicy: Forbidden: may only be set for init containers")
	f("restartPolicy", func(p P) { p.Spec.RestartPolicy = "Sometimes" }, true,
		`spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"`)
	f("defaults required", func(P) {}, false,
		"spec.containers[0].imagePullPolicy: Required value",
		"spec.containers[0].terminationMessagePolicy: Required value",
		"spec.restartPolicy: Required value",
		"spec.dnsPolicy: Required value")
	f("imagePullPolicy", func(p P) { c0(p).ImagePullPolicy = "Sometimes" }, true,
		`spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"`)
	f("ports", func(p P) {
		c0(p).Ports = []v1.ContainerPort{
			{ContainerPort: 0},
			{ContainerPort: 65536, HostPort: -1, Protocol: "ICMP"},
			{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolSCTP, Name: "http"},
		}
	}, true,
		"spec.containers[0].ports[0].containerPort: Invalid value: 0: must be between 1 and 65535, inclusive",
		"spec.containers[0].ports[1].containerPort: Invalid value: 65536: must be between 1 and 65535, inclusive",
		"spec.containers[0].ports[1].hostPort: Invalid value: -1: must be between 1 and 65535, inclusive",
		`spec.containers[0].ports[1].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"`)
	f("host network ports", func(p P) {
		p.Spec.HostNetwork = true
		c0(p).Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}, {ContainerPort: 90}}
	}, true, "spec.containers[0].ports[0].hostPort: Invalid value: 8080: must match `containerPort` when `hostNetwork` is true")
	f("volume names", func(p P) {
		p.Spec.Volumes = append(p.Spec.Volumes,
			v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
			v1.Volume{Name: "", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
	}, true, `spec.volumes[1].name: Duplicate value: "data"`, "spec.volumes[2].name: Required value")
	f("volume without a source after defaulting is an emptyDir", func(p P) {
		p.Spec.Volumes[0].VolumeSource = v1.VolumeSource{}
	}, true)
	f("volume without a source", func(p P) { p.Spec.Volumes[0].VolumeSource = v1.VolumeSource{} }, false,
		"spec.volumes[0]: Required value: must specify a volume type",
		"spec.containers[0].imagePullPolicy: Required value",
		"spec.containers[0].terminationMessagePolicy: Required value",
		"spec.restartPolicy: Required value",
		"spec.dnsPolicy: Required value")
	f("two sources", func(p P) { p.Spec.Volumes[0].HostPath = &v1.HostPathVolumeSource{Path: "/srv"} }, true,
		"spec.volumes[0]: Forbidden: may not specify more than 1 volume type")
	f("hostPath", func(p P) {
		p.Spec.Volumes = append(p.Spec.Volumes,
			v1.Volume{Name: "rel", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "srv/x"}}},
			v1.Volume{Name: "typ", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/srv", Type: ptrTo(v1.HostPathType("Pipe"))}}},
			v1.Volume{Name: "ok", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/run/x.sock", Type: ptrTo(v1.HostPathSocket)}}})
	}, true,
		`spec.volumes[1].hostPath.path: Invalid value: "srv/x": must be an absolute path`,
		`spec.volumes[2].hostPath.type: Unsupported value: "Pipe": supported values: "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"`)
	f("emptyDir medium", func(p P) { p.Spec.Volumes[0].EmptyDir.Medium = "HugePages" }, true,
		`spec.volumes[0].emptyDir.medium: Unsupported value: "HugePages": supported values: "", "Memory"`)
	f("mounts", func(p P) {
		c0(p).VolumeMounts = []v1.VolumeMount{
			{Name: "nope", MountPath: "/a"},
			{Name: "data", MountPath: ""},
			{Name: "data", MountPath: "/a", SubPath: "../etc"},
			{Name: "data", MountPath: "/b", SubPath: "/etc"},
		}
	}, true,
		`spec.containers[0].volumeMounts[0].name: Not found: "nope"`,
		"spec.containers[0].volumeMounts[1].mountPath: Required value",
		`spec.containers[0].volumeMounts[2].mountPath: Invalid value: "/a": must be unique`,
		`spec.containers[0].volumeMounts[2].subPath: Invalid value: "../etc": must not contain '..'`,
		`spec.containers[0].volumeMounts[3].subPath: Invalid value: "/etc": must be a relative path`)
	f("subPath and subPathExpr", func(p P) {
		c0(p).VolumeMounts[0].SubPath, c0(p).VolumeMounts[0].SubPathExpr = "a", "$(POD)"
	}, true, `spec.containers[0].volumeMounts[0].subPathExpr: Invalid value: "$(POD)": subPathExpr and subPath are mutually exclusive`)
	f("requests above limits", func(p P) {
		c0(p).Resources = v1.ResourceRequirements{
			Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("1Gi")},
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi")},
		}
	}, true, `spec.containers[0].resources.requests[cpu]: Invalid value: "1": must be less than or equal to cpu limit of 500m`)
	f("negative quantity", func(p P) {
		c0(p).Resources.Requests = v1.ResourceList{v1.ResourceMemory: resource.MustParse("-1")}
	}, true, `spec.containers[0].resources.requests[memory]: Invalid value: "-1": must be greater than or equal to 0`)
	f("grace period", func(p P) { p.Spec.TerminationGracePeriodSeconds = ptrTo(int64(-1)) }, true,
		"spec.terminationGracePeriodSeconds: Invalid value: -1: must be greater than or equal to 0")
	f("env", func(p P) {
		c0(p).Env = []v1.EnvVar{
			{Name: ""},
			{Name: "A=B"},
			{Name: "weird.but-fine_1"},
			{Name: "NODE", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
			{Name: "LBL", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels['x']"}}},
			{Name: "BOTH", Value: "x", ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
			{Name: "NONE", ValueFrom: &v1.EnvVarSource{}},
			{Name: "CPU", ValueFrom: &v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: "limits.gpu"}}},
		}
	}, true,
		"spec.containers[0].env[0].name: Required value",
		`spec.containers[0].env[1].name: Invalid value: "A=B": a valid environment variable name must consist only of printable ASCII characters other than '='`,
		"spec.containers[0].env[5].valueFrom: Invalid value: \"\": may not be specified when `value` is not empty",
		"spec.containers[0].env[6].valueFrom: Invalid value: \"\": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
		`spec.containers[0].env[7].valueFrom.resourceFieldRef.resource: Unsupported value: "limits.gpu": supported values: "limits.cpu", "limits.ephemeral-storage", "limits.hugepages-<size>", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.hugepages-<size>", "requests.memory"`)
	envFrom := func(vf v1.EnvVarSource) func(P) {
		return func(p P) { c0(p).Env = []v1.EnvVar{{Name: "X", ValueFrom: &vf}} }
	}
	field := func(path string) v1.EnvVarSource {
		return v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: path}}
	}
	f("env: a field podline does not resolve", envFrom(field("status.phase")), true,
		`spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "status.phase": supported values: `+
			`"metadata.annotations['<KEY>']", "metadata.labels['<KEY>']", "metadata.name", "metadata.namespace", "metadata.uid", `+
			`"spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"`)
	f("env: a whole map only fits a volume", envFrom(field("metadata.annotations")), true,
		`spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Unsupported value: "metadata.annotations": supported values: `+
			`"metadata.annotations['<KEY>']", "metadata.labels['<KEY>']", "metadata.name", "metadata.namespace", "metadata.uid", `+
			`"spec.nodeName", "spec.serviceAccountName", "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs"`)
	f("env: a label key that cannot exist", envFrom(field("metadata.labels['a b']")), true,
		`spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Invalid value: "metadata.labels['a b']": key "a b" in metadata.labels: `+
			`name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character `+
			`(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`)
	f("env: no field path", envFrom(field("")), true,
		"spec.containers[0].env[0].valueFrom.fieldRef.fieldPath: Required value")
	f("env: a cpu divisor the API refuses", envFrom(v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{
		Resource: "limits.cpu", Divisor: resource.MustParse("100m")}}), true,
		`spec.containers[0].env[0].valueFrom.resourceFieldRef.divisor: Invalid value: "100m": must be one of 1m, 1 for cpu`)
	f("env: an env file", envFrom(v1.EnvVarSource{FileKeyRef: &v1.FileKeySelector{VolumeName: "data", Path: "a.env", Key: "K"}}), true,
		"spec.containers[0].env[0].valueFrom.fileKeyRef: Forbidden: not supported by podline")
	f("env: two sources", envFrom(v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"},
		SecretKeyRef: &v1.SecretKeySelector{Key: "k"}}), true,
		"spec.containers[0].env[0].valueFrom: Invalid value: \"\": may not have more than one field specified at a time")
	f("env: a key ref without a key", envFrom(v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{}}), true,
		"spec.containers[0].env[0].valueFrom.configMapKeyRef.key: Required value")
}

func TestInvalidErrorReadsPlainly(t *testing.T) {
	p := testPod("a", "u")
	p.Spec.Containers[0].Image = ""
	p.Spec.RestartPolicy = ""
	err := invalidError(Validate(p))
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("%v is not ErrInvalid", err)
	}
	want := "spec.containers[0].image: Required value; spec.restartPolicy: Required value"
	if err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
}
