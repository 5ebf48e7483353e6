package sources

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	v1 "k8s.io/api/core/v1"
)

// watched gives the harness's source an inotify watcher, as Run does, so
// that scans trust it.
func (h *fileHarness) watched() {
	h.t.Helper()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		h.t.Skipf("inotify unavailable: %v", err)
	}
	h.t.Cleanup(func() { w.Close() })
	h.src.watcher = w
}

// An event's rescan looks at the files it names and no others.
func TestFileSourceScanNames(t *testing.T) {
	h := newFileHarness(t, t.TempDir(), time.Hour)
	h.watched()
	h.write("a.yaml", podYAML("a", "nginx:1"))
	h.write("b.yaml", podYAML("b", "nginx:1"))
	h.src.scan(statAll)
	expect(t, h.m, "ADD file [default/a-node1 default/b-node1]")
	if !h.src.incremental() {
		t.Fatal("a watched directory does not take named rescans")
	}

	h.write("a.yaml", podYAML("a", "nginx:2"))
	h.write("b.yaml", podYAML("b", "nginx:2"))
	h.write("c.yaml", podYAML("c", "nginx:1"))
	h.src.scanNames(map[string]struct{}{"a.yaml": {}, "c.yaml": {}})
	got := expect(t, h.m, "REMOVE file [default/a-node1]", "ADD file [default/a-node1 default/c-node1]")
	if img := got[1].Pods[0].Spec.Containers[0].Image; img != "nginx:2" {
		t.Fatalf("a reloaded with %s", img)
	}

	// Removed, or a directory now: its pods go.
	h.remove("a.yaml")
	if err := os.Remove(filepath.Join(h.dir, "c.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(h.dir, "c.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.src.scanNames(map[string]struct{}{"a.yaml": {}, "c.yaml": {}})
	expect(t, h.m, "REMOVE file [default/a-node1 default/c-node1]")

	// b's change was never named: a full scan finds it.
	h.src.scan(statAll)
	expect(t, h.m, "REMOVE file [default/b-node1]", "ADD file [default/b-node1]")
}

// A periodic scan of a watched directory leaves plain files to inotify
// and stats symlinks and hard-linked files, whose changes it cannot see.
func TestFileSourceUntrustedStats(t *testing.T) {
	h := newFileHarness(t, t.TempDir(), time.Hour)
	h.watched()
	elsewhere := t.TempDir()
	h.write("plain.yaml", podYAML("plain", "nginx:1"))
	target := filepath.Join(elsewhere, "target.yaml")
	if err := os.WriteFile(target, []byte(podYAML("linked", "nginx:1")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(h.dir, "linked.yaml")); err != nil {
		t.Fatal(err)
	}
	h.write("hard.yaml", podYAML("hard", "nginx:1"))
	other := filepath.Join(elsewhere, "hard.yaml")
	if err := os.Link(filepath.Join(h.dir, "hard.yaml"), other); err != nil {
		t.Fatal(err)
	}
	h.src.scan(statAll)
	expect(t, h.m, "ADD file [default/hard-node1 default/linked-node1 default/plain-node1]")

	// Changes no event of the directory reports (the scans here consume
	// none), and one that it would have.
	h.write("plain.yaml", podYAML("plain", "nginx:2"))
	if err := os.WriteFile(target, []byte(podYAML("linked", "nginx:2")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, []byte(podYAML("hard", "nginx:2")), 0o644); err != nil {
		t.Fatal(err)
	}
	h.src.scan(statUntrusted)
	expect(t, h.m, "REMOVE file [default/hard-node1 default/linked-node1]", "ADD file [default/hard-node1 default/linked-node1]")
	h.src.scan(statAll)
	expect(t, h.m, "REMOVE file [default/plain-node1]", "ADD file [default/plain-node1]")

	// A new file and a removed one are found without stats of the rest.
	h.write("new.yaml", podYAML("new", "nginx:1"))
	h.remove("plain.yaml")
	h.src.scan(statUntrusted)
	expect(t, h.m, "REMOVE file [default/plain-node1]", "ADD file [default/new-node1]")
}

// Without a watch nothing is trusted: every periodic scan stats all.
func TestFileSourceUnwatchedStatsAll(t *testing.T) {
	h := newFileHarness(t, t.TempDir(), time.Hour)
	h.write("plain.yaml", podYAML("plain", "nginx:1"))
	h.src.scan(statUntrusted)
	expect(t, h.m, "ADD file [default/plain-node1]")
	h.write("plain.yaml", podYAML("plain", "nginx:2"))
	h.src.scan(statUntrusted)
	expect(t, h.m, "REMOVE file [default/plain-node1]", "ADD file [default/plain-node1]")
}

// A rescan that finds nothing new hands the merger nothing, unless the
// merger refused some of the files' pods: a name another source held
// may be free now, and only a new snapshot admits the pod.
func TestFileSourceUnchangedRescan(t *testing.T) {
	log, _ := bufferLogger()
	m := NewMerger(log, FileSource, APISource)
	t.Cleanup(m.Close)
	dir := t.TempDir()
	src := NewFileSource(dir, "node1", time.Hour, m, log)
	h := &fileHarness{t: t, dir: dir, m: m, src: src}
	h.watched()

	api := testPod("web-node1", "uapi")
	m.Set(APISource, []*v1.Pod{api})
	expect(t, m, "ADD api [default/web-node1]")
	h.write("web.yaml", podYAML("web", "nginx:1"))
	h.write("db.yaml", podYAML("db", "nginx:1"))
	src.scan(statAll)
	expect(t, m, "ADD file [default/db-node1]") // web's name is the API pod's
	if !m.Rejecting(FileSource) {
		t.Fatal("the refused pod is not reported")
	}

	m.Set(APISource, nil)
	expect(t, m, "REMOVE api [default/web-node1]")
	src.scan(statUntrusted)
	expect(t, m, "ADD file [default/web-node1]")
	if m.Rejecting(FileSource) {
		t.Fatal("a refusal is still reported once the pod was admitted")
	}
	sets := m.sources[FileSource].gen
	src.scan(statUntrusted)
	src.scan(statAll)
	expect(t, m)
	if got := m.sources[FileSource].gen; got != sets {
		t.Fatalf("%d snapshots handed over by rescans that found nothing new", got-sets)
	}
}

// A manifest under a new name is read at once; an edit of a known one, or
// a new one right after a scan (the rest of a burst), waits out the
// debounce.
func TestFileSourcePromptForNewManifests(t *testing.T) {
	dir := t.TempDir()
	h := newFileHarness(t, dir, time.Hour)
	h.watched()
	h.write("a.yaml", podYAML("a", "nginx:1"))
	h.src.scan(statAll)
	ev := func(name string, op fsnotify.Op) fsnotify.Event {
		return fsnotify.Event{Name: filepath.Join(dir, name), Op: op}
	}
	for _, c := range []struct {
		name  string
		op    fsnotify.Op
		since time.Duration
		want  bool
	}{
		{"b.yaml", fsnotify.Create, time.Second, true},
		{"b.yaml", fsnotify.Create, fileDebounce / 2, false},
		{"a.yaml", fsnotify.Create, time.Second, false},
		{"a.yaml", fsnotify.Write, time.Second, false},
		{"b.yaml", fsnotify.Write, time.Second, false},
	} {
		if got := h.src.prompt(ev(c.name, c.op), c.name, c.since); got != c.want {
			t.Errorf("%s %s %s after a scan: read at once = %v, want %v", c.op, c.name, c.since, got, c.want)
		}
	}
}
