package sources

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// fuzzSources are the sources a merger program speaks for.
var fuzzSources = []string{FileSource, HTTPSource, APISource}

// fuzzPodFor is the pod one byte of a merger program names: the bits pick
// the UID (one of six, "" and a path among them), the name (one of four,
// one invalid), the image, the phase and whether it is being deleted. A
// byte always names the same object, as a source hands the same pointer
// for an unchanged pod.
func fuzzPodFor(b byte, cache map[byte]*v1.Pod) *v1.Pod {
	if p := cache[b]; p != nil {
		return p
	}
	uids := []types.UID{"u0", "u1", "u2", "u3", "", "../u"}
	names := []string{"a", "b", "c", "Not_A_Name"}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: names[b>>3&3], UID: uids[int(b&7)%len(uids)]},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: fmt.Sprintf("img:%d", b>>5&1)}}},
		Status:     v1.PodStatus{Phase: []v1.PodPhase{v1.PodPending, v1.PodRunning}[b>>6&1]},
	}
	if b>>7 == 1 {
		ts := metav1.NewTime(time.Unix(1_700_000_000, 0))
		p.DeletionTimestamp = &ts
	}
	cache[b] = p
	return p
}

// mergerProgram reads data as a sequence of Sets: a byte choosing the
// source and the snapshot's length (0–7), then one byte per pod.
type mergerStep struct {
	source string
	pods   []*v1.Pod
}

func mergerProgram(data []byte) []mergerStep {
	cache := map[byte]*v1.Pod{}
	var steps []mergerStep
	for len(data) > 0 && len(steps) < 64 {
		head := data[0]
		data = data[1:]
		n := min(int(head>>2&7), len(data))
		st := mergerStep{source: fuzzSources[int(head&3)%len(fuzzSources)]}
		for _, b := range data[:n] {
			st.pods = append(st.pods, fuzzPodFor(b, cache))
		}
		data = data[n:]
		steps = append(steps, st)
	}
	return steps
}

// viewPod is what a consumer knows of one pod from the updates alone.
type viewPod struct {
	source string
	pod    *v1.Pod
}

// FuzzMergerSnapshots runs random sequences of snapshots from three sources
// through a Merger and replays every update into a consumer's view. After
// every Set: the updates are sorted, each is a valid transition (ADD of a
// UID the view does not hold, UPDATE/DELETE/RECONCILE/REMOVE of one it
// holds, from the same source); no UID and no namespace/name is held twice;
// every pod held is in its source's last snapshot, as that snapshot has it;
// every admissible snapshot pod is held, or its name is. The whole run,
// replayed on a new Merger, emits the same updates.
func FuzzMergerSnapshots(f *testing.F) {
	f.Add([]byte{0x08, 0x00, 0x10, 0x20})
	f.Add([]byte{0x0c, 0x00, 0x01, 0x08, 0x0d, 0x00, 0x09, 0x11, 0x00})
	f.Add([]byte{0x08, 0x00, 0x00, 0x09, 0x08})
	f.Fuzz(func(t *testing.T, data []byte) {
		steps := mergerProgram(data)
		first := runMerger(t, steps, true)
		again := runMerger(t, steps, false)
		if !slices.Equal(first, again) {
			t.Fatalf("the same sets gave different updates:\n%s\n---\n%s", strings.Join(first, "\n"), strings.Join(again, "\n"))
		}
	})
}

// runMerger applies steps to a new Merger with a fixed clock and returns
// every update described; check asserts the invariants after each Set.
func runMerger(t *testing.T, steps []mergerStep, check bool) []string {
	m := NewMerger(discardLogger(), fuzzSources...)
	defer m.Close()
	m.now = func() time.Time { return time.Unix(1_700_000_000, 0) }
	view := map[types.UID]viewPod{}
	last := map[string][]*v1.Pod{}
	var log []string
	for i, st := range steps {
		m.Set(st.source, st.pods)
		last[st.source] = st.pods
		for _, u := range queued(m) {
			log = append(log, describeFull(u))
			if check {
				applyToView(t, i, u, view)
			}
		}
		if check {
			checkView(t, i, st, view, last)
		}
	}
	return log
}

func applyToView(t *testing.T, step int, u Update, view map[types.UID]viewPod) {
	t.Helper()
	if !slices.IsSortedFunc(u.Pods, comparePods) {
		t.Fatalf("step %d: %s not sorted", step, describe(u))
	}
	for _, p := range u.Pods {
		held, ok := view[p.UID]
		switch {
		case u.Op == ADD && ok:
			t.Fatalf("step %d: ADD %s/%s from %s: UID %s is already held by %s/%s from %s",
				step, p.Namespace, p.Name, u.Source, p.UID, held.pod.Namespace, held.pod.Name, held.source)
		case u.Op != ADD && !ok:
			t.Fatalf("step %d: %s of UID %s, which is not held", step, u.Op, p.UID)
		case u.Op != ADD && held.source != u.Source:
			t.Fatalf("step %d: %s of UID %s from %s, held by %s", step, u.Op, p.UID, u.Source, held.source)
		}
		if u.Op == REMOVE {
			delete(view, p.UID)
			continue
		}
		if p.Annotations[ConfigSourceAnnotation] != u.Source {
			t.Fatalf("step %d: pod %s from %s says source %q", step, p.UID, u.Source, p.Annotations[ConfigSourceAnnotation])
		}
		view[p.UID] = viewPod{source: u.Source, pod: p}
	}
}

func checkView(t *testing.T, step int, st mergerStep, view map[types.UID]viewPod, last map[string][]*v1.Pod) {
	t.Helper()
	names := map[podName]types.UID{}
	for uid, h := range view {
		n := podName{h.pod.Namespace, h.pod.Name}
		if other, dup := names[n]; dup {
			t.Fatalf("step %d: %s held by both %s and %s", step, n, uid, other)
		}
		names[n] = uid
		// The held version is the first of its UID in its source's
		// last snapshot (a later one with the same UID is refused).
		i := slices.IndexFunc(last[h.source], func(p *v1.Pod) bool { return p.UID == uid })
		if i < 0 {
			t.Fatalf("step %d: %s holds %s, which is not in its last snapshot", step, h.source, uid)
		}
		want := last[h.source][i]
		if want.Name == h.pod.Name && !sameDesired(want, h.pod) {
			t.Fatalf("step %d: %s/%s from %s held as image %s phase %s deleting %v; the snapshot has %s %s %v", step,
				h.pod.Namespace, h.pod.Name, h.source, h.pod.Spec.Containers[0].Image, h.pod.Status.Phase, h.pod.DeletionTimestamp != nil,
				want.Spec.Containers[0].Image, want.Status.Phase, want.DeletionTimestamp != nil)
		}
	}
	for _, p := range st.pods {
		if p.UID == "" || len(validatePathNames(p)) > 0 {
			continue
		}
		if _, held := view[p.UID]; held {
			continue
		}
		if _, taken := names[podName{p.Namespace, p.Name}]; !taken {
			t.Fatalf("step %d: %s/%s (%s) from %s is admissible but neither it nor its name is held", step, p.Namespace, p.Name, p.UID, st.source)
		}
	}
}

func sameDesired(a, b *v1.Pod) bool {
	return a.Spec.Containers[0].Image == b.Spec.Containers[0].Image &&
		a.Status.Phase == b.Status.Phase && (a.DeletionTimestamp == nil) == (b.DeletionTimestamp == nil)
}

func describeFull(u Update) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", u.Op, u.Source)
	for _, p := range u.Pods {
		fmt.Fprintf(&b, " %s/%s/%s/%s/%s/%v/%s", p.Namespace, p.Name, p.UID, p.Spec.Containers[0].Image, p.Status.Phase,
			p.DeletionTimestamp != nil, p.Annotations[ConfigSeenAnnotation])
	}
	return b.String()
}
