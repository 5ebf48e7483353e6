package sources

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// expect reads the updates already queued by a Set (Set sends before it
// returns) and compares them with want, one "OP source [ns/name ...]" each.
func expect(t *testing.T, m *Merger, want ...string) []Update {
	t.Helper()
	var got []Update
	var desc []string
	for len(m.Updates()) > 0 {
		u := <-m.Updates()
		got = append(got, u)
		desc = append(desc, describe(u))
	}
	if strings.Join(desc, "\n") != strings.Join(want, "\n") {
		t.Fatalf("updates:\n got: %q\nwant: %q", desc, want)
	}
	return got
}

func TestOpString(t *testing.T) {
	for op, want := range map[Op]string{ADD: "ADD", UPDATE: "UPDATE", DELETE: "DELETE", REMOVE: "REMOVE", RECONCILE: "RECONCILE", Op(9): "Op(9)"} {
		if op.String() != want {
			t.Errorf("%d: %s", int(op), op)
		}
	}
}

func TestMergerOps(t *testing.T) {
	m := NewMerger(discardLogger(), APISource, FileSource)
	defer m.Close()
	a, b := testPod("a", "ua"), testPod("b", "ub")

	m.Set(APISource, []*v1.Pod{b, a})
	expect(t, m, "ADD api [default/a default/b]")
	if m.SeenAll() {
		t.Fatal("SeenAll before the file source delivered")
	}
	m.Set(FileSource, nil)
	expect(t, m, "ADD file []") // the first snapshot always says so
	if !m.SeenAll() {
		t.Fatal("SeenAll false after every source delivered")
	}
	m.Set(FileSource, nil)
	expect(t, m)

	// Same content in new objects, and the same objects again: nothing.
	m.Set(APISource, []*v1.Pod{a.DeepCopy(), b.DeepCopy()})
	expect(t, m)
	m.Set(APISource, []*v1.Pod{a, b})
	expect(t, m)

	// Spec change.
	a2 := a.DeepCopy()
	a2.Spec.Containers[0].Image = "busybox:1.37"
	m.Set(APISource, []*v1.Pod{a2, b})
	got := expect(t, m, "UPDATE api [default/a]")
	if got[0].Pods[0].Spec.Containers[0].Image != "busybox:1.37" {
		t.Errorf("UPDATE carries image %q", got[0].Pods[0].Spec.Containers[0].Image)
	}

	// Local annotations and other metadata are not changes.
	a3 := a2.DeepCopy()
	a3.Annotations = map[string]string{ConfigSourceAnnotation: "api", ConfigMirrorAnnotation: "x", ConfigSeenAnnotation: "then"}
	a3.ResourceVersion = "42"
	m.Set(APISource, []*v1.Pod{a3, b})
	expect(t, m)

	// Labels and other annotations are.
	a4 := a3.DeepCopy()
	a4.Labels = map[string]string{"tier": "web"}
	b2 := b.DeepCopy()
	b2.Annotations = map[string]string{"team": "x"}
	m.Set(APISource, []*v1.Pod{a4, b2})
	expect(t, m, "UPDATE api [default/a default/b]")

	// Status only: RECONCILE with the new status.
	b3 := b2.DeepCopy()
	b3.Status.Phase = v1.PodRunning
	m.Set(APISource, []*v1.Pod{a4, b3})
	got = expect(t, m, "RECONCILE api [default/b]")
	if got[0].Pods[0].Status.Phase != v1.PodRunning {
		t.Errorf("RECONCILE carries phase %q", got[0].Pods[0].Status.Phase)
	}

	// Graceful delete, then gone.
	b4 := b3.DeepCopy()
	now := metav1.Now()
	b4.DeletionTimestamp, b4.DeletionGracePeriodSeconds = &now, ptrTo(int64(30))
	m.Set(APISource, []*v1.Pod{a4, b4})
	expect(t, m, "DELETE api [default/b]")
	m.Set(APISource, []*v1.Pod{a4})
	got = expect(t, m, "REMOVE api [default/b]")
	if got[0].Pods[0].UID != "ub" {
		t.Errorf("REMOVE of UID %s", got[0].Pods[0].UID)
	}

	// Several kinds in one Set come in kubelet's order.
	c, d := testPod("c", "uc"), testPod("d", "ud")
	a5 := a4.DeepCopy()
	a5.Status.Message = "hi"
	m.Set(APISource, []*v1.Pod{c, a5})
	m.Set(APISource, []*v1.Pod{d, a5, c})
	expect(t, m, "ADD api [default/c]", "RECONCILE api [default/a]", "ADD api [default/d]")
	c2 := c.DeepCopy()
	c2.Labels = map[string]string{"x": "y"}
	a6 := a5.DeepCopy()
	a6.Status.Message = "again"
	m.Set(APISource, []*v1.Pod{c2, testPod("e", "ue"), a6})
	expect(t, m, "REMOVE api [default/d]", "ADD api [default/e]", "UPDATE api [default/c]", "RECONCILE api [default/a]")
}

func TestMergerSeenAnnotation(t *testing.T) {
	m := NewMerger(discardLogger(), APISource)
	defer m.Close()
	first := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	m.now = func() time.Time { return first }
	p := testPod("a", "ua")
	m.Set(APISource, []*v1.Pod{p})
	got := expect(t, m, "ADD api [default/a]")
	want := "2026-01-02T03:04:05.000000006Z"
	if s := got[0].Pods[0].Annotations[ConfigSeenAnnotation]; s != want {
		t.Fatalf("config.seen %q, want %q", s, want)
	}
	if p.Annotations != nil {
		t.Fatal("Set modified the pod it was given")
	}
	m.now = func() time.Time { return first.Add(time.Hour) }
	p2 := p.DeepCopy()
	p2.Spec.Containers[0].Image = "other"
	m.Set(APISource, []*v1.Pod{p2})
	got = expect(t, m, "UPDATE api [default/a]")
	if s := got[0].Pods[0].Annotations[ConfigSeenAnnotation]; s != want {
		t.Fatalf("config.seen after UPDATE %q, want %q", s, want)
	}
	if s := got[0].Pods[0].Annotations[ConfigSourceAnnotation]; s != APISource {
		t.Fatalf("config.source %q", s)
	}
}

func TestMergerOwnership(t *testing.T) {
	m := NewMerger(discardLogger(), APISource)
	defer m.Close()
	p := testPod("a", "ua")
	p.Annotations = map[string]string{"team": "x"}
	in := p.DeepCopy()
	m.Set(APISource, []*v1.Pod{p})
	got := expect(t, m, "ADD api [default/a]")[0].Pods[0]
	if !apiequality.Semantic.DeepEqual(p, in) {
		t.Fatal("Set modified its input")
	}
	// What is emitted shares the spec with the input, and has annotations
	// of its own: the input's and the two local ones.
	if got == p || &got.Spec.Containers[0] != &p.Spec.Containers[0] {
		t.Fatal("the emitted pod is a deep copy, or the input itself")
	}
	if got.Annotations["team"] != "x" || got.Annotations[ConfigSourceAnnotation] != APISource || got.Annotations[ConfigSeenAnnotation] == "" {
		t.Fatalf("annotations %v", got.Annotations)
	}
	// A new version shares with the new object, keeps when the pod was
	// first seen, and leaves the kept copy of the old version as it was.
	p2 := p.DeepCopy()
	p2.Spec.Containers[0].Image = "v2"
	m.Set(APISource, []*v1.Pod{p2})
	u := expect(t, m, "UPDATE api [default/a]")[0].Pods[0]
	if &u.Spec.Containers[0] != &p2.Spec.Containers[0] || u.Annotations[ConfigSeenAnnotation] != got.Annotations[ConfigSeenAnnotation] {
		t.Fatalf("update: %v", u.Annotations)
	}
	if got.Spec.Containers[0].Image == "v2" {
		t.Fatal("the update changed the pod emitted before it")
	}
}

func TestMergerNameConflicts(t *testing.T) {
	log, logs := bufferLogger()
	m := NewMerger(log, APISource, FileSource)
	defer m.Close()
	held := testPod("web", "u1")
	m.Set(FileSource, []*v1.Pod{held})
	expect(t, m, "ADD file [default/web]")

	// Another UID with the name, from another source: the holder wins.
	m.Set(APISource, []*v1.Pod{testPod("web", "u2"), testPod("api", "u3")})
	expect(t, m, "ADD api [default/api]")
	if !strings.Contains(logs.String(), "u2") || !strings.Contains(logs.String(), "already used by pod u1 from source file") {
		t.Fatalf("reject not logged:\n%s", logs)
	}
	// From the same source, whatever the order: the holder still wins.
	m.Set(FileSource, []*v1.Pod{testPod("web", "u4"), held})
	expect(t, m)
	// Logged once, not at every resend.
	n := strings.Count(logs.String(), "u4")
	m.Set(FileSource, []*v1.Pod{testPod("web", "u4"), held})
	if c := strings.Count(logs.String(), "u4"); c != n || n != 1 {
		t.Errorf("reject of u4 logged %d then %d times", n, c)
	}
	// A duplicate UID inside one snapshot counts once.
	m.Set(FileSource, []*v1.Pod{held, held.DeepCopy()})
	expect(t, m)

	// The holder goes and the waiting pod of the same Set takes the name:
	// the REMOVE comes first. This is how an edited static pod (new UID,
	// same name) is replaced.
	m.Set(FileSource, []*v1.Pod{testPod("web", "u4")})
	got := expect(t, m, "REMOVE file [default/web]", "ADD file [default/web]")
	if got[0].Pods[0].UID != "u1" || got[1].Pods[0].UID != "u4" {
		t.Fatalf("REMOVE %s ADD %s", got[0].Pods[0].UID, got[1].Pods[0].UID)
	}

	// Across sources the waiting pod gets in at its source's next snapshot.
	m.Set(FileSource, nil)
	expect(t, m, "REMOVE file [default/web]")
	m.Set(APISource, []*v1.Pod{testPod("web", "u2"), testPod("api", "u3")})
	expect(t, m, "ADD api [default/web]")

	// A pod without a UID cannot be tracked.
	m.Set(APISource, []*v1.Pod{testPod("web", "u2"), testPod("api", "u3"), testPod("nouid", "")})
	expect(t, m)
	if !strings.Contains(logs.String(), "pod has no UID") {
		t.Error("missing UID not logged")
	}
}

// TestMergerUIDConflicts: a UID is one pod downstream, so a second source
// handing over a pod under a UID another source holds (a static manifest
// may write any uid) is refused until the holder lets it go. Found by
// FuzzMergerSnapshots.
func TestMergerUIDConflicts(t *testing.T) {
	log, logs := bufferLogger()
	m := NewMerger(log, APISource, FileSource)
	defer m.Close()
	m.Set(APISource, []*v1.Pod{testPod("db", "u1")})
	expect(t, m, "ADD api [default/db]")

	m.Set(FileSource, []*v1.Pod{testPod("takeover", "u1"), testPod("own", "u2")})
	expect(t, m, "ADD file [default/own]")
	if !strings.Contains(logs.String(), "UID already used by a pod from source api") {
		t.Fatalf("reject not logged:\n%s", logs)
	}
	if !m.Rejecting(FileSource) {
		t.Error("Rejecting(file) false while its pod waits for the UID")
	}
	m.Set(APISource, nil)
	expect(t, m, "REMOVE api [default/db]")
	m.Set(FileSource, []*v1.Pod{testPod("takeover", "u1"), testPod("own", "u2")})
	expect(t, m, "ADD file [default/takeover]")
}

func TestMergerRename(t *testing.T) {
	m := NewMerger(discardLogger(), APISource)
	defer m.Close()
	m.Set(APISource, []*v1.Pod{testPod("old", "u1")})
	expect(t, m, "ADD api [default/old]")
	m.Set(APISource, []*v1.Pod{testPod("new", "u1")})
	expect(t, m, "REMOVE api [default/old]", "ADD api [default/new]")
}

// fill queues updatesBuffer ADDs without reading them.
func fill(m *Merger) {
	var pods []*v1.Pod
	for i := range updatesBuffer {
		pods = append(pods, testPod("p"+strconv.Itoa(i), types.UID("u"+strconv.Itoa(i))))
		m.Set(APISource, pods)
	}
}

func TestMergerBackpressure(t *testing.T) {
	m := NewMerger(discardLogger(), APISource)
	defer m.Close()
	fill(m)
	done := make(chan struct{})
	go func() {
		m.Set(APISource, nil) // a REMOVE: must wait for room
		close(done)
	}()
	select {
	case <-done:
		t.Fatal("Set did not wait for the consumer")
	case <-time.After(50 * time.Millisecond):
	}
	<-m.Updates()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Set still blocked after the consumer caught up")
	}
	// Nothing was dropped.
	var ops []string
	for len(m.Updates()) > 0 {
		ops = append(ops, (<-m.Updates()).Op.String())
	}
	if strings.Join(ops, " ") != "ADD ADD ADD ADD REMOVE" {
		t.Fatalf("queued ops %v", ops)
	}
}

func TestMergerClose(t *testing.T) {
	m := NewMerger(discardLogger(), APISource)
	fill(m)
	done := make(chan struct{})
	go func() {
		m.Set(APISource, nil)
		close(done)
	}()
	time.Sleep(20 * time.Millisecond)
	m.Close()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not release the blocked Set")
	}
	m.Close()
	m.Set(APISource, nil) // a no-op now
	n := 0
	for range m.Updates() { // closed, so this ends
		n++
	}
	if n != updatesBuffer {
		t.Fatalf("%d updates left after close, want the %d queued", n, updatesBuffer)
	}
}

func TestMergerUnknownSource(t *testing.T) {
	m := NewMerger(discardLogger(), APISource)
	defer m.Close()
	defer func() {
		if r := recover(); r == nil || !strings.HasPrefix(r.(string), "BUG:") {
			t.Fatalf("recovered %v", r)
		}
	}()
	m.Set(FileSource, nil)
}

func TestMergerUnchangedAllocs(t *testing.T) {
	m := NewMerger(discardLogger(), FileSource)
	defer m.Close()
	pods := make([]*v1.Pod, 10000)
	for i := range pods {
		pods[i] = testPod("p"+strconv.Itoa(i), types.UID("uid-"+strconv.Itoa(i)))
	}
	m.Set(FileSource, pods)
	expect(t, m, describe(Update{Op: ADD, Source: FileSource, Pods: sortedCopy(pods)}))
	allocs := testing.AllocsPerRun(5, func() { m.Set(FileSource, pods) })
	if allocs > 10 {
		t.Fatalf("an unchanged 10,000-pod snapshot allocated %v times", allocs)
	}
	expect(t, m)
}

func sortedCopy(pods []*v1.Pod) []*v1.Pod {
	out := slices.Clone(pods)
	slices.SortFunc(out, comparePods)
	return out
}

// Every name that ends up in a file or cgroup path is checked for every
// source, the API server's included: no path may rely on a source having
// validated it.
func TestMergerRejectsUnsafePathNames(t *testing.T) {
	log, logs := bufferLogger()
	m := NewMerger(log, APISource)
	defer m.Close()
	f := func(name string, uid types.UID, change func(*v1.Pod)) *v1.Pod {
		p := testPod(name, uid)
		change(p)
		return p
	}
	keep := func(*v1.Pod) {}
	good := f("good", "0b5c8f5e-8ed6-4cf5-9c1a-3f6b3b1c2d4e", keep)
	bad := []*v1.Pod{
		f("escape", "x/../../../../etc", keep),
		f("dots", "..", keep),
		f("ns", "u-ns", func(p *v1.Pod) { p.Namespace = "../etc" }),
		f("ctr", "u-ctr", func(p *v1.Pod) { p.Spec.Containers[0].Name = "../../x" }),
		f("init", "u-init", func(p *v1.Pod) { p.Spec.InitContainers = []v1.Container{{Name: "a/b", Image: "i"}} }),
		f("vol", "u-vol", func(p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{{Name: "..", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
		}),
		f("Bad/Name", "u-name", keep),
	}
	m.Set(APISource, append([]*v1.Pod{good}, bad...))
	expect(t, m, "ADD api [default/good]")
	for _, want := range []string{
		`metadata.uid: Invalid value: \"x/../../../../etc\"`,
		`metadata.uid: Invalid value: \"..\"`,
		`metadata.namespace: Invalid value: \"../etc\"`,
		`spec.containers[0].name: Invalid value: \"../../x\"`,
		`spec.initContainers[0].name: Invalid value: \"a/b\"`,
		`spec.volumes[0].name: Invalid value: \"..\"`,
		`metadata.name: Invalid value: \"Bad/Name\"`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, logs)
		}
	}

	// A known pod whose update would bring an unsafe name keeps the
	// version it has.
	worse := good.DeepCopy()
	worse.Spec.Containers[0].Name = "../c"
	m.Set(APISource, []*v1.Pod{worse})
	expect(t, m)
	if !strings.Contains(logs.String(), `spec.containers[0].name: Invalid value: \"../c\"`) {
		t.Errorf("rejected update not logged:\n%s", logs)
	}
	fixed := good.DeepCopy()
	fixed.Spec.Containers[0].Image = "busybox:1.37"
	m.Set(APISource, []*v1.Pod{fixed})
	expect(t, m, "UPDATE api [default/good]")
}
