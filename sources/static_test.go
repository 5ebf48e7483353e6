package sources

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func decodeOne(t *testing.T, data string) *v1.Pod {
	t.Helper()
	pods, err := Decode([]byte(data))
	if err != nil || len(pods) != 1 {
		t.Fatalf("decode: %v (%d pods)", err, len(pods))
	}
	return pods[0]
}

func TestMakeStaticIdentity(t *testing.T) {
	uid := func(data, source, location, node string) string {
		t.Helper()
		p := decodeOne(t, data)
		if err := MakeStatic(p, source, location, node); err != nil {
			t.Fatal(err)
		}
		return string(p.UID)
	}
	base := uid(podYAML("web", "nginx:1"), FileSource, "/m/web.yaml", "node1")
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(base) {
		t.Fatalf("UID %q is not 32 hex digits", base)
	}
	if again := uid(podYAML("web", "nginx:1"), FileSource, "/m/web.yaml", "node1"); again != base {
		t.Errorf("same manifest, file and node gave %s then %s", base, again)
	}
	different := map[string]string{
		"content": uid(podYAML("web", "nginx:2"), FileSource, "/m/web.yaml", "node1"),
		"file":    uid(podYAML("web", "nginx:1"), FileSource, "/m/other.yaml", "node1"),
		"node":    uid(podYAML("web", "nginx:1"), FileSource, "/m/web.yaml", "node2"),
		"source":  uid(podYAML("web", "nginx:1"), HTTPSource, "/m/web.yaml", "node1"),
	}
	for what, u := range different {
		if u == base {
			t.Errorf("changing the %s kept UID %s", what, u)
		}
	}
	// A uid in the manifest is kept, as the kubelet keeps it.
	p := decodeOne(t, podYAML("web", "nginx:1"))
	p.UID = "set-by-author"
	if err := MakeStatic(p, FileSource, "/m/web.yaml", "node1"); err != nil {
		t.Fatal(err)
	}
	if p.UID != "set-by-author" || p.Annotations[ConfigHashAnnotation] != "set-by-author" {
		t.Errorf("manifest uid replaced: %s", p.UID)
	}
}

func TestMakeStaticFields(t *testing.T) {
	p := decodeOne(t, podYAML("web", "nginx:1"))
	if err := MakeStatic(p, HTTPSource, "http://cfg/pods", "node1"); err != nil {
		t.Fatal(err)
	}
	if p.Name != "web-node1" || p.Spec.NodeName != "node1" {
		t.Errorf("name %q nodeName %q", p.Name, p.Spec.NodeName)
	}
	if p.Annotations[ConfigHashAnnotation] != string(p.UID) || p.Annotations[ConfigSourceAnnotation] != HTTPSource {
		t.Errorf("annotations %v", p.Annotations)
	}
	if _, ok := p.Annotations[ConfigSeenAnnotation]; ok {
		t.Error("config.seen is the merger's to set")
	}
	if p.Status.Phase != v1.PodPending {
		t.Errorf("phase %q", p.Status.Phase)
	}
	if len(p.Spec.Tolerations) != 1 || p.Spec.Tolerations[0] != staticToleration {
		t.Errorf("tolerations %v", p.Spec.Tolerations)
	}

	// An equivalent toleration already present is not added twice.
	q := decodeOne(t, podYAML("web", "nginx:1")+"  tolerations: [{operator: Exists, effect: NoExecute}]\n")
	if err := MakeStatic(q, FileSource, "/m/web.yaml", "node1"); err != nil {
		t.Fatal(err)
	}
	if len(q.Spec.Tolerations) != 1 {
		t.Errorf("tolerations %v", q.Spec.Tolerations)
	}

	// No name stays no name, for validation to report.
	r := decodeOne(t, "apiVersion: v1\nkind: Pod\nspec: {containers: [{name: c, image: i}]}\n")
	if err := MakeStatic(r, FileSource, "/m/x.yaml", "node1"); err != nil {
		t.Fatal(err)
	}
	ApplyDefaults(r)
	if errs := Validate(r); len(errs) != 1 || errs[0].Error() != "metadata.name: Required value" {
		t.Errorf("validation of a nameless pod: %v", errs)
	}
}

// A uid written in a manifest is kept, so it must not be able to name a
// path: the pod's directory, log directory and cgroup are built from it.
func TestManifestUIDMustBeOnePathElement(t *testing.T) {
	f := func(uid, wantErr string) {
		t.Helper()
		data := strings.Replace(podYAML("web", "nginx:1"), "  name: web\n", "  name: web\n  uid: "+strconv.Quote(uid)+"\n", 1)
		pods, err := loadStatic([]byte(data), FileSource, "/m/web.yaml", "node1")
		switch {
		case wantErr == "" && err != nil:
			t.Errorf("uid %q: %v", uid, err)
		case wantErr == "" && (len(pods) != 1 || string(pods[0].UID) != uid):
			t.Errorf("uid %q: pods %v", uid, pods)
		case wantErr != "" && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), wantErr)):
			t.Errorf("uid %q: error %v, want ErrInvalid with %q", uid, err, wantErr)
		}
	}
	f("0b5c8f5e-8ed6-4cf5-9c1a-3f6b3b1c2d4e", "")
	f("x/../../../../etc", `metadata.uid: Invalid value: "x/../../../../etc"`)
	f("..", `metadata.uid: Invalid value: ".."`)
	f("../pods", `metadata.uid: Invalid value: "../pods"`)
}
