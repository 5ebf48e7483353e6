package stages

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/podspec"
)

// envNode is the node the environment tests resolve against.
var envNode = &Node{Name: "node-a"}

func envPod(env []v1.EnvVar) *v1.Pod {
	return unitPod(func(p *v1.Pod) { p.Spec.Containers[0].Env = env })
}

// containerEnv builds the container's config from what FetchEnvObjects
// read and returns its environment.
func containerEnv(pod *v1.Pod, spec *v1.Container, objs *podspec.EnvObjects) ([]*runtimeapi.KeyValue, error) {
	cfg, err := podspec.ContainerConfig(pod, podspec.Instance{Spec: spec, Env: objs}, "img", nil, envNode)
	if err != nil {
		return nil, err
	}
	return cfg.Envs, nil
}

// fakeEnvSource serves objects from maps and counts reads.
type fakeEnvSource struct {
	cms, secrets map[string]map[string][]byte
	reads        int
}

func (f *fakeEnvSource) read(m map[string]map[string][]byte, name string) (map[string][]byte, bool, error) {
	f.reads++
	d, ok := m[name]
	return d, ok, nil
}

func (f *fakeEnvSource) ConfigMap(_ context.Context, _, name string) (map[string][]byte, bool, error) {
	return f.read(f.cms, name)
}

func (f *fakeEnvSource) Secret(_ context.Context, _, name string) (map[string][]byte, bool, error) {
	return f.read(f.secrets, name)
}

func TestEnvFromConfigMapsAndSecrets(t *testing.T) {
	yes := true
	src := &fakeEnvSource{
		// "1st.key" is a name the API server accepts too; "bad=name" is none.
		cms: map[string]map[string][]byte{"app": {
			"MODE": []byte("fast"), "LEVEL": []byte("3"), "1st.key": []byte("y"), "bad=name": []byte("x"),
		}},
		secrets: map[string]map[string][]byte{"creds": {"password": []byte("s3cret")}},
	}
	pod := envPod([]v1.EnvVar{
		{Name: "MODE", Value: "slow"}, // env wins over envFrom
		{Name: "PASS", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "creds"}, Key: "password"}}},
		{Name: "LVL", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "app"}, Key: "LEVEL"}}},
		{Name: "GONE", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "app"}, Key: "nope", Optional: &yes}}},
		{Name: "ALSO", Value: "$(CFG_LEVEL)"},
	})
	spec := &pod.Spec.Containers[0]
	spec.EnvFrom = []v1.EnvFromSource{
		{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "app"}}},
		{Prefix: "CFG_", ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "app"}}},
		{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "missing"}, Optional: &yes}},
	}
	objs, err := FetchEnvObjects(context.Background(), src, nil, pod, spec)
	if err != nil {
		t.Fatal(err)
	}
	if src.reads != 3 {
		t.Errorf("%d reads, want 3 (app, missing, creds: each once)", src.reads)
	}
	kvs, err := containerEnv(pod, spec, objs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, kv := range kvs {
		got = append(got, kv.Key+"="+string(kv.Value))
	}
	want := "1st.key=y LEVEL=3 MODE=slow CFG_1st.key=y CFG_LEVEL=3 CFG_MODE=fast PASS=s3cret LVL=3 ALSO=3"
	if strings.Join(got, " ") != want {
		t.Errorf("env\n got %s\nwant %s", strings.Join(got, " "), want)
	}

	bad := func(name string, e v1.EnvVar, wantMsg string) {
		t.Helper()
		p := envPod([]v1.EnvVar{e})
		objs, err := FetchEnvObjects(context.Background(), src, nil, p, &p.Spec.Containers[0])
		if err == nil {
			_, err = containerEnv(p, &p.Spec.Containers[0], objs)
		}
		if !errors.Is(err, podspec.ErrConfig) || !strings.Contains(err.Error(), wantMsg) {
			t.Errorf("%s: error %v, want podspec.ErrConfig with %q", name, err, wantMsg)
		}
	}
	bad("missing key", v1.EnvVar{Name: "X", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: "app"}, Key: "nope"}}}, `couldn't find key nope in ConfigMap default/app`)
	bad("missing configMap", v1.EnvVar{Name: "X", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: "other"}, Key: "k"}}}, `configmap "other" not found`)

	// The first error is the kubelet's: references are resolved in order,
	// so a key missing from an earlier object comes before a later
	// object that is missing altogether.
	p2 := envPod([]v1.EnvVar{
		{Name: "A", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "app"}, Key: "nope"}}},
		{Name: "B", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "gone"}, Key: "k"}}},
	})
	objs2, err := FetchEnvObjects(context.Background(), src, nil, p2, &p2.Spec.Containers[0])
	if err == nil {
		_, err = containerEnv(p2, &p2.Spec.Containers[0], objs2)
	}
	if err == nil || err.Error() != "couldn't find key nope in ConfigMap default/app" {
		t.Errorf("first of two bad references: %v", err)
	}

	// Without an API server only optional references resolve (to nothing).
	p := envPod([]v1.EnvVar{{Name: "X", ValueFrom: &v1.EnvVarSource{SecretKeyRef: &v1.SecretKeySelector{
		LocalObjectReference: v1.LocalObjectReference{Name: "creds"}, Key: "password"}}}})
	if _, err := containerEnv(p, &p.Spec.Containers[0], nil); !errors.Is(err, podspec.ErrConfig) ||
		!strings.Contains(err.Error(), "need an API server") {
		t.Errorf("standalone secret reference: %v", err)
	}
}
