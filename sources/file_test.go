package sources

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/internal/podtest"
)

type fileHarness struct {
	t    *testing.T
	dir  string
	m    *Merger
	src  *ManifestPath
	logs *podtest.LogBuffer
}

func newFileHarness(t *testing.T, path string, period time.Duration) *fileHarness {
	t.Helper()
	log, logs := bufferLogger()
	m := NewMerger(log, FileSource)
	t.Cleanup(m.Close)
	return &fileHarness{t: t, dir: path, m: m, src: NewFileSource(path, "node1", period, m, log), logs: logs}
}

func (h *fileHarness) write(name, content string) string {
	h.t.Helper()
	path := filepath.Join(h.dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return path
}

func (h *fileHarness) remove(name string) {
	h.t.Helper()
	if err := os.Remove(filepath.Join(h.dir, name)); err != nil {
		h.t.Fatal(err)
	}
}

// run starts Run and returns once its first scan has been delivered.
func (h *fileHarness) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		h.src.Run(ctx)
		close(done)
	}()
	h.t.Cleanup(func() {
		cancel()
		<-done
	})
	if u := recv(h.t, h.m, 5*time.Second); u.Op != ADD {
		h.t.Fatalf("first update %s", describe(u))
	}
}

func TestFileSourceScan(t *testing.T) {
	h := newFileHarness(t, t.TempDir(), time.Hour)
	h.src.scan(statAll)
	expect(t, h.m, "ADD file []")

	web := h.write("web.yaml", podYAML("web", "nginx:1"))
	h.write(".web.yaml.swp", "not a manifest")
	if err := os.Mkdir(filepath.Join(h.dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.write("sub/db.yaml", podYAML("db", "postgres:17"))
	h.src.scan(statAll)
	got := expect(t, h.m, "ADD file [default/web-node1]")
	p := got[0].Pods[0]
	if p.Spec.NodeName != "node1" || p.Annotations[ConfigSourceAnnotation] != FileSource ||
		p.Annotations[ConfigHashAnnotation] != string(p.UID) || p.Annotations[ConfigSeenAnnotation] == "" ||
		p.Spec.Containers[0].ImagePullPolicy != v1.PullIfNotPresent {
		t.Fatalf("static pod not made up: %+v", p)
	}
	uid := p.UID

	h.src.scan(statAll)
	expect(t, h.m)

	// An edit makes a new pod (new UID) under the same name.
	h.write("web.yaml", podYAML("web", "nginx:2"))
	h.src.scan(statAll)
	got = expect(t, h.m, "REMOVE file [default/web-node1]", "ADD file [default/web-node1]")
	if got[0].Pods[0].UID != uid || got[1].Pods[0].UID == uid {
		t.Fatalf("edit: REMOVE %s ADD %s (old %s)", got[0].Pods[0].UID, got[1].Pods[0].UID, uid)
	}

	h.remove("web.yaml")
	h.src.scan(statAll)
	expect(t, h.m, "REMOVE file [default/web-node1]")
	if len(h.src.files) != 0 || len(h.src.Errors()) != 0 {
		t.Fatalf("state of %s kept after removal", web)
	}
}

func TestFileSourceBadManifests(t *testing.T) {
	h := newFileHarness(t, t.TempDir(), time.Hour)
	errorsBefore := fileManifestErrors.Get()
	h.write("good.yaml", podYAML("good", "nginx:1"))
	bad := h.write("bad.yaml", strings.Replace(podYAML("bad", "x"), "    image: x\n", "", 1))
	h.src.scan(statAll)
	expect(t, h.m, "ADD file [default/good-node1]")
	want := bad + ": spec.containers[0].image: Required value"
	if err := h.src.Errors()[bad]; err == nil || err.Error() != want {
		t.Fatalf("Errors()[bad] = %v, want %q", err, want)
	}
	if !strings.Contains(h.logs.String(), "level=ERROR") || !strings.Contains(h.logs.String(), want) {
		t.Fatalf("log lacks %q:\n%s", want, h.logs)
	}
	if n := fileManifestErrors.Get() - errorsBefore; n != 1 {
		t.Fatalf("error metric moved by %d", n)
	}

	// The unchanged bad file is not read, counted or logged again.
	logged := h.logs.String()
	h.src.scan(statAll)
	expect(t, h.m)
	if n := fileManifestErrors.Get() - errorsBefore; n != 1 || h.logs.String() != logged {
		t.Fatalf("rescan of an unchanged bad file: metric %d, new log %q", n, strings.TrimPrefix(h.logs.String(), logged))
	}

	// A good file broken keeps its pod, whatever the breakage.
	good := filepath.Join(h.dir, "good.yaml")
	for _, broken := range []struct{ content, field string }{
		{strings.Replace(podYAML("good", "nginx:1"), "image:", "imagePullPolizy: Always\n    image:", 1), `unknown field "spec.containers[0].imagePullPolizy"`},
		{podYAML("good", "nginx:1")[:strings.Index(podYAML("good", "nginx:1"), "spec:")+6], "spec.containers: Required value"}, // cut short
		{podYAML("good", "nginx:1")[:strings.Index(podYAML("good", "nginx:1"), "  - name")+4], "spec.containers[0].name: Required value"},
		{"", "no pods in manifest"},
		{podYAML("good", "nginx:1") + "  restartPolicy: Sometimes\n", `spec.restartPolicy: Unsupported value: "Sometimes"`},
	} {
		h.write("good.yaml", broken.content)
		h.src.scan(statAll)
		expect(t, h.m)
		if err := h.src.Errors()[good]; err == nil || !strings.HasPrefix(err.Error(), good+": ") || !strings.Contains(err.Error(), broken.field) {
			t.Fatalf("broken with %q: error %v", broken.field, err)
		}
	}

	// Fixed to what it was: the same pod, so nothing to do.
	h.write("good.yaml", podYAML("good", "nginx:1"))
	h.src.scan(statAll)
	expect(t, h.m)
	if _, ok := h.src.Errors()[good]; ok {
		t.Fatal("error kept after the fix")
	}

	// Removing a bad file that never worked changes nothing but the errors.
	h.remove("bad.yaml")
	h.src.scan(statAll)
	expect(t, h.m)
	if len(h.src.Errors()) != 0 {
		t.Fatalf("errors left: %v", h.src.Errors())
	}

	// A broken file that is then removed takes its last good pod with it.
	h.write("good.yaml", "garbage: [")
	h.src.scan(statAll)
	expect(t, h.m)
	h.remove("good.yaml")
	h.src.scan(statAll)
	expect(t, h.m, "REMOVE file [default/good-node1]")
}

func TestFileSourceNameClash(t *testing.T) {
	h := newFileHarness(t, t.TempDir(), time.Hour)
	h.write("a.yaml", podYAML("web", "nginx:1"))
	h.write("b.yaml", podYAML("web", "nginx:2"))
	h.src.scan(statAll)
	got := expect(t, h.m, "ADD file [default/web-node1]")
	if img := got[0].Pods[0].Spec.Containers[0].Image; img != "nginx:1" {
		t.Fatalf("the first file in name order should win, got image %s", img)
	}
	if !strings.Contains(h.logs.String(), "already used") {
		t.Fatalf("clash not logged:\n%s", h.logs)
	}
	h.remove("a.yaml")
	h.src.scan(statAll)
	got = expect(t, h.m, "REMOVE file [default/web-node1]", "ADD file [default/web-node1]")
	if img := got[1].Pods[0].Spec.Containers[0].Image; img != "nginx:2" {
		t.Fatalf("after a.yaml went, got image %s", img)
	}
}

func TestFileSourceSingleFileAndSymlinks(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.yaml")
	if err := os.WriteFile(real, []byte(podYAML("one", "nginx:1")+"---\n"+podYAML("two", "nginx:1")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "other.yaml"), []byte(podYAML("other", "x:1")), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newFileHarness(t, real, time.Hour)
	h.src.scan(statAll)
	expect(t, h.m, "ADD file [default/one-node1 default/two-node1]")

	// A symlink in a directory is followed; the pod's location is the link.
	linked := t.TempDir()
	link := filepath.Join(linked, "link.yaml")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "missing.yaml"), filepath.Join(linked, "dangling.yaml")); err != nil {
		t.Fatal(err)
	}
	h2 := newFileHarness(t, linked, time.Hour)
	h2.src.scan(statAll)
	got := expect(t, h2.m, "ADD file [default/one-node1 default/two-node1]")
	if len(h2.src.Errors()) != 0 {
		t.Fatalf("errors: %v", h2.src.Errors())
	}
	if p := got[0].Pods[0]; p.UID == "" {
		t.Fatal("no UID")
	}
}

func TestFileSourceInotify(t *testing.T) {
	// The rescan period is an hour: whatever arrives comes from inotify.
	h := newFileHarness(t, t.TempDir(), time.Hour)
	h.run()
	start := time.Now()
	h.write("web.yaml", podYAML("web", "nginx:1"))
	if u := recv(t, h.m, time.Second); describe(u) != "ADD file [default/web-node1]" {
		t.Fatalf("after create: %s", describe(u))
	}
	t.Logf("create seen after %v", time.Since(start))
	h.write("web.yaml", podYAML("web", "nginx:2"))
	if u := recv(t, h.m, time.Second); describe(u) != "REMOVE file [default/web-node1]" {
		t.Fatalf("after edit: %s", describe(u))
	}
	if u := recv(t, h.m, time.Second); describe(u) != "ADD file [default/web-node1]" || u.Pods[0].Spec.Containers[0].Image != "nginx:2" {
		t.Fatalf("after edit: %s", describe(u))
	}
	// An atomic replace (write elsewhere, rename over) is seen too.
	tmp := h.write(".web.yaml.tmp", podYAML("web", "nginx:3"))
	if err := os.Rename(tmp, filepath.Join(h.dir, "web.yaml")); err != nil {
		t.Fatal(err)
	}
	recv(t, h.m, time.Second) // REMOVE nginx:2
	if u := recv(t, h.m, time.Second); u.Op != ADD || u.Pods[0].Spec.Containers[0].Image != "nginx:3" {
		t.Fatalf("after rename: %s", describe(u))
	}
	h.remove("web.yaml")
	if u := recv(t, h.m, time.Second); describe(u) != "REMOVE file [default/web-node1]" {
		t.Fatalf("after delete: %s", describe(u))
	}
	noUpdate(t, h.m, 200*time.Millisecond)
}

func TestFileSourceRescanFindsLateDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "manifests")
	h := newFileHarness(t, dir, 100*time.Millisecond)
	h.run() // an empty set for a missing directory
	if !strings.Contains(h.logs.String(), "does not exist") {
		t.Fatalf("missing directory not logged:\n%s", h.logs)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	h.write("web.yaml", podYAML("web", "nginx:1"))
	if u := recv(t, h.m, 2*time.Second); describe(u) != "ADD file [default/web-node1]" {
		t.Fatalf("late directory: %s", describe(u))
	}
	// The directory is watched now; and if it goes, its pods go.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if u := recv(t, h.m, 2*time.Second); describe(u) != "REMOVE file [default/web-node1]" {
		t.Fatalf("directory removed: %s", describe(u))
	}
}
