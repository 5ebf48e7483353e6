package sources

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Downward API items in volumes are checked as the API server checks them,
// with the paths and resources podline resolves.
func TestValidateDownwardVolumes(t *testing.T) {
	// f validates a defaulted pod whose one volume has items and expects
	// exactly want.
	f := func(name string, items []v1.DownwardAPIVolumeFile, want ...string) {
		t.Helper()
		for _, projected := range []bool{false, true} {
			src := v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{Items: items}}
			prefix := "spec.volumes[0].downwardAPI.items"
			if projected {
				src = v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
					{DownwardAPI: &v1.DownwardAPIProjection{Items: items}},
				}}}
				prefix = "spec.volumes[0].projected.sources[0].downwardAPI.items"
			}
			p := &v1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-1"},
				Spec: v1.PodSpec{
					Volumes:    []v1.Volume{{Name: "info", VolumeSource: *src.DeepCopy()}},
					Containers: []v1.Container{{Name: "main", Image: "busybox"}},
				},
			}
			ApplyDefaults(p)
			var got []string
			for _, e := range Validate(p) {
				got = append(got, strings.TrimPrefix(e.Error(), prefix))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s (projected %v):\n got: %q\nwant: %q", name, projected, got, want)
			}
		}
	}
	field := func(path, fieldPath string) v1.DownwardAPIVolumeFile {
		return v1.DownwardAPIVolumeFile{Path: path, FieldRef: &v1.ObjectFieldSelector{FieldPath: fieldPath}}
	}
	res := func(path, container, r, divisor string) v1.DownwardAPIVolumeFile {
		sel := &v1.ResourceFieldSelector{ContainerName: container, Resource: r}
		if divisor != "" {
			sel.Divisor = resource.MustParse(divisor)
		}
		return v1.DownwardAPIVolumeFile{Path: path, ResourceFieldRef: sel}
	}

	f("valid", []v1.DownwardAPIVolumeFile{
		field("labels", "metadata.labels"), field("annotations", "metadata.annotations"),
		field("app", "metadata.labels['app']"), field("n/name", "metadata.name"), field("uid", "metadata.uid"),
		res("cpu", "main", "limits.cpu", "1m"), res("mem", "main", "requests.memory", "1Mi"),
		res("huge", "main", "limits.hugepages-2Mi", ""),
	})
	f("fields a volume may not read", []v1.DownwardAPIVolumeFile{field("ip", "status.podIP"), field("node", "spec.nodeName")},
		`[0].fieldRef.fieldPath: Unsupported value: "status.podIP": supported values: "metadata.annotations", "metadata.annotations['<KEY>']", "metadata.labels", "metadata.labels['<KEY>']", "metadata.name", "metadata.namespace", "metadata.uid"`,
		`[1].fieldRef.fieldPath: Unsupported value: "spec.nodeName": supported values: "metadata.annotations", "metadata.annotations['<KEY>']", "metadata.labels", "metadata.labels['<KEY>']", "metadata.name", "metadata.namespace", "metadata.uid"`)
	f("a label key that cannot exist", []v1.DownwardAPIVolumeFile{field("x", "metadata.labels['a b']")},
		`[0].fieldRef.fieldPath: Invalid value: "metadata.labels['a b']": key "a b" in metadata.labels: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`)
	f("apiVersion", []v1.DownwardAPIVolumeFile{{Path: "x", FieldRef: &v1.ObjectFieldSelector{APIVersion: "v2", FieldPath: "metadata.name"}}},
		`[0].fieldRef.apiVersion: Unsupported value: "v2": supported values: "v1"`)
	f("resourceFieldRef names its container in a volume", []v1.DownwardAPIVolumeFile{res("cpu", "", "limits.cpu", "")},
		"[0].resourceFieldRef.containerName: Required value")
	f("resources and divisors", []v1.DownwardAPIVolumeFile{
		res("gpu", "main", "limits.gpu", ""), res("cpu", "main", "limits.cpu", "100m"),
		res("mem", "main", "limits.memory", "3"), res("none", "main", "", ""),
	},
		`[0].resourceFieldRef.resource: Unsupported value: "limits.gpu": supported values: "limits.cpu", "limits.ephemeral-storage", "limits.hugepages-<size>", "limits.memory", "requests.cpu", "requests.ephemeral-storage", "requests.hugepages-<size>", "requests.memory"`,
		`[1].resourceFieldRef.divisor: Invalid value: "100m": must be one of 1m, 1 for cpu`,
		`[2].resourceFieldRef.divisor: Invalid value: "3": must be one of 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei for memory`,
		"[3].resourceFieldRef.resource: Required value")
	f("one of fieldRef and resourceFieldRef", []v1.DownwardAPIVolumeFile{
		{Path: "none"},
		{Path: "both", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}, ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "main", Resource: "limits.cpu"}},
	},
		"[0]: Required value: one of fieldRef and resourceFieldRef is required",
		`[1]: Invalid value: "resource": fieldRef and resourceFieldRef can not be specified simultaneously`)
	f("paths and modes", []v1.DownwardAPIVolumeFile{
		field("", "metadata.name"), field("/abs", "metadata.name"), field("a/../../b", "metadata.name"), field("..data", "metadata.name"),
		{Path: "m", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}, Mode: ptrTo[int32](0o1777)},
	},
		"[0].path: Required value",
		`[1].path: Invalid value: "/abs": must be a relative path`,
		`[2].path: Invalid value: "a/../../b": must not contain '..'`,
		`[3].path: Invalid value: "..data": must not start with '..'`,
		"[4].mode: Invalid value: 1023: must be a number between 0 and 0777 (octal), both inclusive")
}
