package podspec_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/podspec"
	"github.com/podline/podline/sources"
)

// TestEnvAgreesWithValidation: every field path and resource podspec
// offers an environment variable passes the validation of static pods and
// resolves here; one it does not offer is refused by both, validation
// naming the field.
func TestEnvAgreesWithValidation(t *testing.T) {
	var env []v1.EnvVar
	for i, path := range podspec.FieldPaths(podspec.InEnv) {
		env = append(env, podspec.EnvFieldForTest(fmt.Sprintf("F%d", i), strings.ReplaceAll(path, "<KEY>", "app")))
	}
	for i, res := range podspec.ResourceFields() {
		env = append(env, podspec.EnvResFieldForTest(fmt.Sprintf("R%d", i), strings.ReplaceAll(res, "<size>", "2Mi"), ""))
	}
	pod := podspec.EnvPodForTest(env, podspec.TestResourcesForTest("250m", "64Mi", "1", "1Gi"))
	sources.ApplyDefaults(pod)
	if errs := sources.Validate(pod); len(errs) > 0 {
		t.Fatalf("validation refuses what env offers: %v", errs)
	}
	kvs, err := podspec.ContainerEnvForTest(pod, &pod.Spec.Containers[0], nil, []string{"10.88.0.5"}, podspec.EnvNodeForTest)
	if err != nil {
		t.Fatalf("env does not resolve what validation accepts: %v", err)
	}
	if len(kvs) != len(env) {
		t.Errorf("%d variables, want %d", len(kvs), len(env))
	}

	f := func(name string, vf v1.EnvVarSource, wantField string) {
		t.Helper()
		pod := podspec.EnvPodForTest([]v1.EnvVar{{Name: "X", ValueFrom: &vf}}, v1.ResourceRequirements{})
		sources.ApplyDefaults(pod)
		errs := sources.Validate(pod)
		if len(errs) != 1 || errs[0].Field != wantField {
			t.Errorf("%s: validation %v, want one error on %s", name, errs, wantField)
		}
		if _, err := podspec.EnvStringForTest(t, pod, nil); !errors.Is(err, podspec.ErrConfig) {
			t.Errorf("%s: env error %v, want podspec.ErrConfig", name, err)
		}
	}
	field := func(path string) v1.EnvVarSource {
		return v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: path}}
	}
	res := func(r string) v1.EnvVarSource {
		return v1.EnvVarSource{ResourceFieldRef: &v1.ResourceFieldSelector{Resource: r}}
	}
	const at = "spec.containers[0].env[0].valueFrom."
	f("a field no reader has", field("status.phase"), at+"fieldRef.fieldPath")
	f("a field only a volume reads", field("metadata.labels"), at+"fieldRef.fieldPath")
	f("a key that cannot exist", field("metadata.annotations['-x']"), at+"fieldRef.fieldPath")
	f("an extended resource", res("limits.example.com/gpu"), at+"resourceFieldRef.resource")
	f("an env file", v1.EnvVarSource{FileKeyRef: &v1.FileKeySelector{VolumeName: "v", Path: "p", Key: "k"}}, at+"fileKeyRef")
}
