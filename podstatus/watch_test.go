package podstatus

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/podline/podline/sources"
)

// watchCache plays the API source's copies of the node's pods, as
// Config.Watched reads them.
type watchCache struct {
	mu   sync.Mutex
	pods map[types.NamespacedName]*v1.Pod
}

func (w *watchCache) put(p *v1.Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pods == nil {
		w.pods = map[types.NamespacedName]*v1.Pod{}
	}
	w.pods[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = p.DeepCopy()
}

func (w *watchCache) get(ns, name string) (*v1.Pod, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.pods[types.NamespacedName{Namespace: ns, Name: name}]
	return p, ok
}

// startWatched is start with a watch cache behind Config.Watched.
func startWatched(t *testing.T, objs ...runtime.Object) (*env, *watchCache) {
	t.Helper()
	w := &watchCache{}
	e := start(t, func(c *Config) { c.Watched = w.get }, objs...)
	return e, w
}

// patchMeta is the metadata a patch carries as its preconditions.
func patchMeta(t *testing.T, a k8stesting.Action) (uid types.UID, resourceVersion string) {
	t.Helper()
	var p struct {
		Metadata struct {
			UID             types.UID `json:"uid"`
			ResourceVersion string    `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(a.(k8stesting.PatchAction).GetPatch(), &p); err != nil {
		t.Fatal(err)
	}
	return p.Metadata.UID, p.Metadata.ResourceVersion
}

// scheduled is a pod's API object as the scheduler and a load balancer
// controller left it, before the node wrote anything.
func scheduled(pod *v1.Pod, rv string) *v1.Pod {
	o := object(pod)
	o.ResourceVersion = rv
	o.Status = v1.PodStatus{
		Phase: v1.PodPending,
		Conditions: []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue},
			{Type: "example.com/lb", Status: v1.ConditionTrue},
		},
	}
	return o
}

func requests(e *env) (gets, patches int) {
	return len(e.api.actions("get")), len(e.api.actions("patch"))
}

func TestFirstStatusOfAWatchedPodIsOnePatch(t *testing.T) {
	pod := apiPod("p1", "u1")
	obj := scheduled(pod, "7")
	e, w := startWatched(t, obj)
	w.put(obj)
	hits := watchHits.Get()

	e.store.Set(pod, podStatus(v1.PodRunning, true, time.Now()))
	eventually(t, "status patched", func() bool { return e.apiStatus(t, "ns", "p1").Phase == v1.PodRunning })

	if gets, patches := requests(e); gets != 0 || patches != 1 {
		t.Fatalf("%d gets, %d patches; want the one patch", gets, patches)
	}
	if uid, rv := patchMeta(t, e.api.actions("patch")[0]); uid != "u1" || rv != "7" {
		t.Fatalf("patch preconditions uid %q resourceVersion %q, want u1 and the watched 7", uid, rv)
	}
	if got := watchHits.Get(); got != hits+1 {
		t.Fatalf("watch hits %d, want %d", got, hits+1)
	}
	st := e.apiStatus(t, "ns", "p1")
	if c := condition(st, "example.com/lb"); c == nil || c.Status != v1.ConditionTrue {
		t.Fatalf("a condition owned by someone else was lost: %+v", st.Conditions)
	}
	if c := condition(st, v1.PodReady); c == nil || c.Status != v1.ConditionTrue {
		t.Fatalf("Ready not sent: %+v", st.Conditions)
	}

	// The next status goes against the patch's answer, without the
	// resourceVersion: others may write the object in between.
	e.store.Set(pod, podStatus(v1.PodSucceeded, false, time.Now()))
	eventually(t, "second status", func() bool { return e.apiStatus(t, "ns", "p1").Phase == v1.PodSucceeded })
	if gets, patches := requests(e); gets != 0 || patches != 2 {
		t.Fatalf("%d gets, %d patches; want 0 and 2", gets, patches)
	}
	if _, rv := patchMeta(t, e.api.actions("patch")[1]); rv != "" {
		t.Fatalf("second patch carries resourceVersion %q", rv)
	}
}

func TestWatchedStatusAlreadySentIsNoRequest(t *testing.T) {
	// podline restarted: its watch lists the pods with the status the last
	// run wrote, and nothing is sent or read.
	pod := apiPod("p1", "u1")
	st := podStatus(v1.PodRunning, true, time.Now())
	obj := object(pod)
	obj.ResourceVersion = "9"
	obj.Status = roundTrip(t, st)
	e, w := startWatched(t, obj)
	w.put(obj)

	skipped := patchesSkipped.Get()
	e.store.Set(pod, st)
	eventually(t, "the sync", func() bool { return patchesSkipped.Get() == skipped+1 })
	if n := len(e.api.Actions()); n != 0 {
		t.Fatalf("%d requests for a status the watch shows the API server has", n)
	}
}

func TestPodNotInTheWatchIsRead(t *testing.T) {
	for _, tc := range []struct {
		name    string
		watched *v1.Pod
	}{
		{"not delivered yet", nil},
		{"an older pod of the same name", scheduled(apiPod("p1", "u-old"), "3")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := apiPod("p1", "u1")
			e, w := startWatched(t, scheduled(pod, "7"))
			if tc.watched != nil {
				w.put(tc.watched)
			}
			misses := watchMisses.Get()

			e.store.Set(pod, podStatus(v1.PodRunning, true, time.Now()))
			eventually(t, "status patched", func() bool { return e.apiStatus(t, "ns", "p1").Phase == v1.PodRunning })

			if gets, patches := requests(e); gets != 1 || patches != 1 {
				t.Fatalf("%d gets, %d patches; want a get, then a patch", gets, patches)
			}
			if verbs := e.api.Actions(); verbs[0].GetVerb() != "get" {
				t.Fatalf("first request %s, want the get", verbs[0].GetVerb())
			}
			if uid, rv := patchMeta(t, e.api.actions("patch")[0]); uid != "u1" || rv != "" {
				t.Fatalf("patch preconditions uid %q resourceVersion %q, want u1 alone", uid, rv)
			}
			if got := watchMisses.Get(); got != misses+1 {
				t.Fatalf("watch misses %d, want %d", got, misses+1)
			}
			if c := condition(e.apiStatus(t, "ns", "p1"), "example.com/lb"); c == nil {
				t.Fatal("a condition owned by someone else was lost")
			}
		})
	}
}

func TestWatchBehindTheAPIFallsBackToRead(t *testing.T) {
	pod := apiPod("p1", "u1")
	seen := scheduled(pod, "7")
	seen.Status.Conditions = seen.Status.Conditions[:1] // PodScheduled only
	// Since the watch saw it, a controller set its condition and someone
	// set a Ready the node does not agree with.
	now := scheduled(pod, "8")
	now.Status.Conditions = append(now.Status.Conditions, v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue})
	e, w := startWatched(t, now)
	w.put(seen)
	conflicts, ok := watchConflicts.Get(), patchesOK.Get()

	e.store.Set(pod, podStatus(v1.PodPending, false, time.Now()))
	eventually(t, "status patched", func() bool { return patchesOK.Get() == ok+1 })

	var verbs []string
	for _, a := range e.api.Actions() {
		verbs = append(verbs, a.GetVerb())
	}
	if len(verbs) != 3 || verbs[0] != "patch" || verbs[1] != "get" || verbs[2] != "patch" {
		t.Fatalf("requests %v, want patch (conflict), get, patch", verbs)
	}
	patches := e.api.actions("patch")
	if _, rv := patchMeta(t, patches[0]); rv != "7" {
		t.Fatalf("first patch resourceVersion %q, want the watched 7", rv)
	}
	if uid, rv := patchMeta(t, patches[1]); uid != "u1" || rv != "" {
		t.Fatalf("second patch preconditions uid %q resourceVersion %q, want u1 alone", uid, rv)
	}
	if got := watchConflicts.Get(); got != conflicts+1 {
		t.Fatalf("watch conflicts %d, want %d", got, conflicts+1)
	}
	st := e.apiStatus(t, "ns", "p1")
	if st.Phase != v1.PodPending || len(st.ContainerStatuses) != 1 {
		t.Fatalf("status not sent: %+v", st)
	}
	if c := condition(st, "example.com/lb"); c == nil || c.Status != v1.ConditionTrue {
		t.Fatalf("the controller's condition was lost: %+v", st.Conditions)
	}
	if c := condition(st, v1.PodReady); c == nil || c.Status != v1.ConditionFalse {
		t.Fatalf("Ready %+v, want the node's false", c)
	}
}

func TestWatchIsNotTrustedAfterAWrite(t *testing.T) {
	pod := apiPod("p1", "u1")
	obj := scheduled(pod, "7")
	e, w := startWatched(t, obj)
	w.put(obj) // and it stays at 7: the watch lags behind the writes
	ok := patchesOK.Get()
	e.store.Set(pod, podStatus(v1.PodPending, false, time.Now()))
	eventually(t, "first status", func() bool { return patchesOK.Get() == ok+1 })

	// The next patch fails in a way that leaves open whether it landed, so
	// the API object's status is unknown again; the watch's copy predates
	// the first write and must not stand in for it.
	var failed sync.Once
	e.api.PrependReactor("patch", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		hit := false
		failed.Do(func() { hit = true })
		if hit {
			return true, nil, apierrors.NewTimeoutError("request timed out", 1)
		}
		return false, nil, nil
	})
	e.store.Set(pod, podStatus(v1.PodRunning, true, time.Now()))
	eventually(t, "second status", func() bool { return e.apiStatus(t, "ns", "p1").Phase == v1.PodRunning })
	if gets, patches := requests(e); gets != 1 || patches != 3 {
		t.Fatalf("%d gets, %d patches; want 1 and 3 (first, failed, after the read)", gets, patches)
	}
	if _, rv := patchMeta(t, e.api.actions("patch")[2]); rv != "" {
		t.Fatalf("patch after the read carries resourceVersion %q", rv)
	}
}

func TestMirrorPodStatusFromTheWatch(t *testing.T) {
	static := apiPod("web-node1", "s1")
	static.Annotations[sources.ConfigSourceAnnotation] = sources.FileSource
	mirror := object(static)
	mirror.UID, mirror.ResourceVersion = "m1", "4"
	mirror.Annotations = map[string]string{sources.ConfigMirrorAnnotation: "hash"}
	e, w := startWatched(t, mirror)
	w.put(mirror)
	e.mirror.Store(&target{namespace: "ns", name: "web-node1", uid: "m1"})

	e.store.Set(static, podStatus(v1.PodRunning, true, time.Now()))
	eventually(t, "mirror status", func() bool { return e.apiStatus(t, "ns", "web-node1").Phase == v1.PodRunning })
	if gets, patches := requests(e); gets != 0 || patches != 1 {
		t.Fatalf("%d gets, %d patches; want the one patch", gets, patches)
	}
	if uid, rv := patchMeta(t, e.api.actions("patch")[0]); uid != "m1" || rv != "4" {
		t.Fatalf("patch preconditions uid %q resourceVersion %q, want the mirror's m1 and 4", uid, rv)
	}
}
