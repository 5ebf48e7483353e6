package podspec

import (
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func fieldPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "shop", UID: "uid-1",
			Labels:      map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"example.com/owner": "team \"a\""},
		},
		Spec: v1.PodSpec{NodeName: "node-a", ServiceAccountName: "builder"},
	}
}

var fieldAddrs = Addresses{PodIPs: []string{"10.88.0.5", "fd00::5"}, HostIPs: []string{"192.0.2.10", "2001:db8::10"}}

func TestFieldValue(t *testing.T) {
	f := func(path string, r Reader, want string) {
		t.Helper()
		if err := CheckFieldPath(path, r); err != nil {
			t.Errorf("%s in %s: check: %v", path, r, err)
		}
		got, err := FieldValue(fieldPod(), path, r, fieldAddrs)
		if err != nil || got != want {
			t.Errorf("%s in %s: %q, %v; want %q", path, r, got, err, want)
		}
	}
	for _, r := range []Reader{InEnv, InVolume} {
		f("metadata.name", r, "web")
		f("metadata.namespace", r, "shop")
		f("metadata.uid", r, "uid-1")
		f("metadata.labels['app']", r, "web")
		f("metadata.labels['missing']", r, "")
		f("metadata.annotations['example.com/owner']", r, `team "a"`)
		f("metadata.annotations['Example.com/Owner']", r, "") // keys are case-sensitive; valid in any case
	}
	f("spec.nodeName", InEnv, "node-a")
	f("spec.serviceAccountName", InEnv, "builder")
	f("status.podIP", InEnv, "10.88.0.5")
	f("status.podIPs", InEnv, "10.88.0.5,fd00::5")
	f("status.hostIP", InEnv, "192.0.2.10")
	f("status.hostIPs", InEnv, "192.0.2.10,2001:db8::10")
	f("metadata.labels", InVolume, "app=\"web\"\ntier=\"front\"")
	f("metadata.annotations", InVolume, `example.com/owner="team \"a\""`)
}

func TestFieldValueBeforeAddresses(t *testing.T) {
	for _, path := range []string{"status.podIP", "status.podIPs", "status.hostIP", "status.hostIPs"} {
		if got, err := FieldValue(fieldPod(), path, InEnv, Addresses{}); err != nil || got != "" {
			t.Errorf("%s without addresses: %q, %v", path, got, err)
		}
	}
}

func TestFieldPathRefused(t *testing.T) {
	f := func(path string, r Reader, unsupported bool, msg string) {
		t.Helper()
		err := CheckFieldPath(path, r)
		_, valueErr := FieldValue(fieldPod(), path, r, fieldAddrs)
		if err == nil || valueErr == nil || err.Error() != valueErr.Error() {
			t.Fatalf("%s in %s: check %v, value %v; want the same error from both", path, r, err, valueErr)
		}
		if errors.Is(err, ErrUnsupported) != unsupported || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s in %s: %v; want unsupported=%v mentioning %q", path, r, err, unsupported, msg)
		}
	}
	f("status.phase", InEnv, true, `unsupported fieldRef "status.phase" in an environment variable`)
	f("metadata.labels", InEnv, true, "in an environment variable")
	f("metadata.annotations", InEnv, true, "")
	f("status.podIP", InVolume, true, `unsupported fieldRef "status.podIP" in a volume`)
	f("spec.nodeName", InVolume, true, "")
	f("metadata.name['x']", InEnv, true, "")
	f("metadata.labels[x]", InEnv, true, "")
	f("metadata.labels[']", InEnv, true, "")
	f("", InEnv, true, "")
	f("metadata.labels['']", InEnv, false, `key "" in metadata.labels: `)
	f("metadata.labels['a b']", InVolume, false, `key "a b" in metadata.labels: `)
	f("metadata.annotations['-x']", InEnv, false, `key "-x" in metadata.annotations: `)
}

func TestFieldPaths(t *testing.T) {
	f := func(r Reader, want string) {
		t.Helper()
		if got := strings.Join(FieldPaths(r), " "); got != want {
			t.Errorf("%s:\n got %s\nwant %s", r, got, want)
		}
	}
	f(InEnv, "metadata.annotations['<KEY>'] metadata.labels['<KEY>'] metadata.name metadata.namespace metadata.uid "+
		"spec.nodeName spec.serviceAccountName status.hostIP status.hostIPs status.podIP status.podIPs")
	f(InVolume, "metadata.annotations metadata.annotations['<KEY>'] metadata.labels metadata.labels['<KEY>'] "+
		"metadata.name metadata.namespace metadata.uid")
	// Every listed plain path resolves for its reader.
	for _, r := range []Reader{InEnv, InVolume} {
		for _, path := range FieldPaths(r) {
			path = strings.ReplaceAll(path, "<KEY>", "k")
			if _, err := FieldValue(fieldPod(), path, r, fieldAddrs); err != nil {
				t.Errorf("listed %s does not resolve in %s: %v", path, r, err)
			}
		}
	}
}
