package sources

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzDecode feeds manifest decoding and the static pod pipeline (decode,
// identity, defaults, validation) whatever a manifest file may hold. Seeds
// in testdata/fuzz/FuzzDecode cover YAML and JSON pods, lists, several
// documents, deep nesting, invalid UTF-8 and aliases; a huge one is built
// here so it need not be committed.
//
// Properties: no panic; every error is of its class with a message; a pod
// that decodes re-encodes as JSON that decodes to the same JSON; a pod that
// loads is valid, static (UID, node name, annotations) and loads to the same
// UID again.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(podYAML("web", "nginx:1.27")))
	f.Add([]byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"j"},"spec":{"containers":[{"name":"c","image":"i"}]}}`))
	f.Add([]byte(podYAML("a", "i") + "---\n" + podYAML("b", "i")))
	f.Add(hugeManifest(300))
	f.Fuzz(func(t *testing.T, data []byte) {
		pods, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrDecode) || err.Error() == "" {
				t.Fatalf("Decode error %q is not an ErrDecode with a message", err)
			}
			return
		}
		for _, p := range pods {
			checkJSONRoundTrip(t, p)
		}
		checkLoadStatic(t, data)
	})
}

// checkJSONRoundTrip encodes p as a v1 Pod and decodes it again: the
// second encoding must be the first. (Not the input itself: decoding
// normalises quantities and times.)
func checkJSONRoundTrip(t *testing.T, p *v1.Pod) {
	t.Helper()
	p = p.DeepCopy()
	p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
	first, err := json.Marshal(p)
	if err != nil {
		t.Fatalf("encode decoded pod: %v", err)
	}
	again, err := Decode(first)
	if err != nil {
		t.Fatalf("decode of a decoded pod's JSON %s: %v", first, err)
	}
	if len(again) != 1 {
		t.Fatalf("decode of one pod's JSON gave %d pods", len(again))
	}
	again[0].TypeMeta = p.TypeMeta
	second, err := json.Marshal(again[0])
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Fatalf("JSON round trip changed the pod:\n first: %s\nsecond: %s", first, second)
	}
}

func checkLoadStatic(t *testing.T, data []byte) {
	t.Helper()
	const location, node = "/etc/kubernetes/manifests/fuzz.yaml", "node-1"
	pods, err := loadStatic(data, FileSource, location, node)
	if err != nil {
		switch {
		case errors.Is(err, ErrInvalid):
			// Every message names a field, or the pod and then a field.
			msg := err.Error()
			if !strings.HasPrefix(msg, "metadata.") && !strings.HasPrefix(msg, "spec.") && !strings.HasPrefix(msg, "pod ") {
				t.Fatalf("invalid pod error %q names no field", msg)
			}
		case errors.Is(err, ErrDecode):
		default:
			if !strings.HasPrefix(err.Error(), "hash pod ") {
				t.Fatalf("loadStatic error %q has no class", err)
			}
		}
		return
	}
	uids := make(map[string]bool, len(pods))
	for _, p := range pods {
		if errs := Validate(p); len(errs) > 0 {
			t.Fatalf("loaded pod fails validation: %v", errs)
		}
		if p.UID == "" || p.Spec.NodeName != node || p.Annotations[ConfigSourceAnnotation] != FileSource ||
			p.Annotations[ConfigHashAnnotation] != string(p.UID) || !strings.HasSuffix(p.Name, "-"+node) {
			t.Fatalf("loaded pod is not static: uid %q node %q annotations %v name %q", p.UID, p.Spec.NodeName, p.Annotations, p.Name)
		}
		if !utf8.ValidString(p.Name) || !utf8.ValidString(p.Namespace) {
			t.Fatalf("valid pod with a name that is not UTF-8: %q/%q", p.Namespace, p.Name)
		}
		uids[string(p.UID)] = true
	}
	again, err := loadStatic(data, FileSource, location, node)
	if err != nil || len(again) != len(pods) {
		t.Fatalf("second load of the same data: %d pods, %v; first gave %d", len(again), err, len(pods))
	}
	for i := range again {
		if again[i].UID != pods[i].UID {
			t.Fatalf("same data, pod %d: UID %s then %s", i, pods[i].UID, again[i].UID)
		}
	}
}

// hugeManifest is a PodList of n pods, as YAML.
func hugeManifest(n int) []byte {
	var b bytes.Buffer
	b.WriteString("apiVersion: v1\nkind: PodList\nitems:\n")
	for i := range n {
		b.WriteString("- metadata:\n    name: p")
		b.WriteString(strings.Repeat("x", i%50))
		b.WriteString("\n  spec:\n    containers:\n    - name: c\n      image: busybox\n")
	}
	return b.Bytes()
}
