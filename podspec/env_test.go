package podspec

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

var envNode = &Node{Name: "node-a", IPs: []string{"192.0.2.10", "2001:db8::10"}, CPUMilli: 4000, MemoryBytes: 8 << 30,
	Allocatable: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"),
		v1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}}

// envPod is a pod whose app container has env and resources.
func envPod(env []v1.EnvVar, res v1.ResourceRequirements) *v1.Pod {
	return unitPod(func(p *v1.Pod) {
		p.Labels = map[string]string{"app": "web", "tier": "front"}
		p.Annotations = map[string]string{"owner": "team-a"}
		p.Spec.NodeName = "node-a"
		p.Spec.ServiceAccountName = "builder"
		p.Spec.Containers[0].Env = env
		p.Spec.Containers[0].Resources = res
	})
}

func envString(t *testing.T, pod *v1.Pod, podIPs []string) (string, error) {
	t.Helper()
	kvs, err := containerEnv(pod, &pod.Spec.Containers[0], nil, podIPs, envNode)
	var parts []string
	for _, kv := range kvs {
		parts = append(parts, kv.Key+"="+string(kv.Value))
	}
	return strings.Join(parts, " "), err
}

func envField(name, path string) v1.EnvVar {
	return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: path}}}
}

func envResField(name, res, divisor string) v1.EnvVar {
	sel := &v1.ResourceFieldSelector{Resource: res}
	if divisor != "" {
		sel.Divisor = resource.MustParse(divisor)
	}
	return v1.EnvVar{Name: name, ValueFrom: &v1.EnvVarSource{ResourceFieldRef: sel}}
}

func TestContainerEnv(t *testing.T) {
	f := func(name string, env []v1.EnvVar, res v1.ResourceRequirements, want string) {
		t.Helper()
		got, err := envString(t, envPod(env, res), []string{"10.88.0.5", "fd00::5"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	val := func(n, v string) v1.EnvVar { return v1.EnvVar{Name: n, Value: v} }

	f("literal values, in order", []v1.EnvVar{val("B", "2"), val("A", "1")}, v1.ResourceRequirements{}, "B=2 A=1")
	f("references to earlier values, escapes, unknown names",
		[]v1.EnvVar{val("HOME", "/root"), val("BIN", "$(HOME)/bin"), val("LATER", "$(NEXT)"), val("NEXT", "x"), val("LIT", "$$(HOME)")},
		v1.ResourceRequirements{}, "HOME=/root BIN=/root/bin LATER=$(NEXT) NEXT=x LIT=$(HOME)")
	f("a redefined name: one variable, later references see the new value",
		[]v1.EnvVar{val("X", "1"), val("X", "2"), val("Y", "$(X)")}, v1.ResourceRequirements{}, "X=2 Y=2")
	f("downward API fields", []v1.EnvVar{
		envField("NAME", "metadata.name"), envField("NS", "metadata.namespace"), envField("UID", "metadata.uid"),
		envField("NODE", "spec.nodeName"), envField("SA", "spec.serviceAccountName"),
		envField("IP", "status.podIP"), envField("IPS", "status.podIPs"),
		envField("HOST", "status.hostIP"), envField("HOSTS", "status.hostIPs"),
		envField("APP", "metadata.labels['app']"), envField("NOLABEL", "metadata.labels['missing']"),
		envField("OWNER", "metadata.annotations['owner']"),
	}, v1.ResourceRequirements{},
		"NAME=web NS=default UID=uid-web NODE=node-a SA=builder IP=10.88.0.5 IPS=10.88.0.5,fd00::5 "+
			"HOST=192.0.2.10 HOSTS=192.0.2.10,2001:db8::10 APP=web NOLABEL= OWNER=team-a")
	f("a field value is not expanded", []v1.EnvVar{val("A", "1"), envField("NAME", "metadata.name"), val("REF", "$(NAME)-$(A)")},
		v1.ResourceRequirements{}, "A=1 NAME=web REF=web-1")

	limits := testResources("250m", "64Mi", "1500m", "1Gi")
	f("resource fields with divisors", []v1.EnvVar{
		envResField("CPU_LIMIT", "limits.cpu", ""),     // 1.5 cores rounds up
		envResField("CPU_LIMIT_M", "limits.cpu", "1m"), // in millicores
		envResField("CPU_REQ", "requests.cpu", ""),     // 0.25 rounds up
		envResField("CPU_REQ_M", "requests.cpu", "1m"),
		envResField("MEM_LIMIT", "limits.memory", ""),
		envResField("MEM_LIMIT_MI", "limits.memory", "1Mi"),
		envResField("MEM_REQ_MI", "requests.memory", "1Mi"),
		envResField("MEM_REQ_G", "requests.memory", "1G"), // 64Mi in decimal gigabytes rounds up
	}, limits, "CPU_LIMIT=2 CPU_LIMIT_M=1500 CPU_REQ=1 CPU_REQ_M=250 MEM_LIMIT=1073741824 MEM_LIMIT_MI=1024 MEM_REQ_MI=64 MEM_REQ_G=1")
	f("an unset limit reads as the node's allocatable", []v1.EnvVar{
		envResField("CPU", "limits.cpu", "1m"), envResField("MEM", "limits.memory", "1Mi"), envResField("EPH", "limits.ephemeral-storage", "1Gi"),
	}, v1.ResourceRequirements{}, "CPU=4000 MEM=8192 EPH=100")

	yes := true
	f("optional configMap and secret keys are skipped", []v1.EnvVar{
		val("A", "1"),
		{Name: "CM", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Key: "k", Optional: &yes}}},
		{Name: "SEC", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "s"}, Key: "k", Optional: &yes}}},
		val("B", "$(CM)"),
	}, v1.ResourceRequirements{}, "A=1 B=$(CM)")
}

// The kubelet defaults only missing limits to the node's allocatable; a
// missing request reads as 0.
func TestContainerEnvUnsetRequest(t *testing.T) {
	got, err := envString(t, envPod([]v1.EnvVar{
		envResField("CPU", "requests.cpu", "1m"), envResField("MEM", "requests.memory", ""),
	}, v1.ResourceRequirements{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "CPU=0 MEM=0"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestContainerEnvErrors(t *testing.T) {
	f := func(name string, mutate func(c *v1.Container), wantMsg string) {
		t.Helper()
		pod := envPod(nil, v1.ResourceRequirements{})
		mutate(&pod.Spec.Containers[0])
		_, err := envString(t, pod, nil)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), wantMsg) {
			t.Errorf("%s: error %v, want ErrConfig mentioning %q", name, err, wantMsg)
		}
	}
	no := false
	env := func(e ...v1.EnvVar) func(*v1.Container) { return func(c *v1.Container) { c.Env = e } }
	f("configMap key", env(v1.EnvVar{Name: "CM", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Key: "k"}}}), "env CM")
	f("secret key, explicitly not optional", env(v1.EnvVar{Name: "S", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: "s"}, Key: "k", Optional: &no}}}), "env S")
	f("unsupported field", env(envField("X", "status.phase")), `unsupported fieldRef "status.phase"`)
	f("a volume-only field", env(envField("X", "metadata.labels")), `unsupported fieldRef "metadata.labels"`)
	f("an invalid label key", env(envField("X", "metadata.labels['']")), `key "" in metadata.labels`)
	f("unsupported resource", env(envResField("X", "limits.nvidia.com/gpu", "")), `unsupported resourceFieldRef "limits.nvidia.com/gpu"`)
	f("malformed resource", env(envResField("X", "cpu", "")), `unsupported resourceFieldRef "cpu"`)
	f("a divisor the API refuses", env(envResField("X", "limits.cpu", "100m")), "divisor 100m")
	f("another container that is not there", env(v1.EnvVar{Name: "X", ValueFrom: &v1.EnvVarSource{
		ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "nope", Resource: "limits.cpu"}}}), `no container "nope"`)
	f("an env file", env(v1.EnvVar{Name: "X", ValueFrom: &v1.EnvVarSource{FileKeyRef: &v1.FileKeySelector{}}}),
		"unsupported value source fileKeyRef")
	f("no value source", env(v1.EnvVar{Name: "X", ValueFrom: &v1.EnvVarSource{}}), "must specify one of")
	f("envFrom configMap", func(c *v1.Container) {
		c.EnvFrom = []v1.EnvFromSource{{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}}
	}, "envFrom")
	f("envFrom secret", func(c *v1.Container) {
		c.EnvFrom = []v1.EnvFromSource{{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "s"}}}}
	}, "envFrom")

	yes := true
	pod := envPod([]v1.EnvVar{{Name: "A", Value: "1"}}, v1.ResourceRequirements{})
	pod.Spec.Containers[0].EnvFrom = []v1.EnvFromSource{
		{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}, Optional: &yes}},
		{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "s"}, Optional: &yes}},
	}
	if got, err := envString(t, pod, nil); err != nil || got != "A=1" {
		t.Errorf("optional envFrom: %q, %v; want A=1 and no error", got, err)
	}
}
