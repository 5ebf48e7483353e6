package sources

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// apiHarness runs an APIWatcher against a fake clientset.
type apiHarness struct {
	cs       *fake.Clientset
	merger   *Merger
	src      *APIWatcher
	watching chan struct{} // closed once the first watch is open

	mu        sync.Mutex
	selectors []string // "verb selector" of every list and watch
	mirrors   [][]*v1.Pod
}

// newAPIHarness starts the source. The fake clientset ignores field
// selectors, so the harness records them; and since a fake watch only sees
// what happens after it opens, tests write pods after watching is closed.
func newAPIHarness(t *testing.T, objs ...runtime.Object) *apiHarness {
	t.Helper()
	h := &apiHarness{cs: fake.NewClientset(objs...), watching: make(chan struct{})}
	h.merger = NewMerger(discardLogger(), APISource)
	h.cs.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		h.record("list " + a.(k8stesting.ListAction).GetListRestrictions().Fields.String())
		return false, nil, nil
	})
	var once sync.Once
	h.cs.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		wa := a.(k8stesting.WatchAction)
		h.record("watch " + wa.GetWatchRestrictions().Fields.String())
		w, err := h.cs.Tracker().Watch(v1.SchemeGroupVersion.WithResource("pods"), wa.GetNamespace())
		once.Do(func() { close(h.watching) })
		return true, w, err
	})
	h.src = NewAPISource(APIConfig{
		Client: h.cs, NodeName: "node1", Merger: h.merger, Log: discardLogger(),
		Mirrors: func(pods []*v1.Pod) {
			h.mu.Lock()
			h.mirrors = append(h.mirrors, pods)
			h.mu.Unlock()
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.src.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		h.merger.Close()
		<-done
	})
	return h
}

func (h *apiHarness) record(s string) {
	h.mu.Lock()
	h.selectors = append(h.selectors, s)
	h.mu.Unlock()
}

func (h *apiHarness) waitWatching(t *testing.T) {
	t.Helper()
	select {
	case <-h.watching:
	case <-time.After(5 * time.Second):
		t.Fatal("the source never opened a watch")
	}
}

// lastMirrors waits until the Mirrors callback has been called n times in
// all and returns the set of its last call.
func (h *apiHarness) lastMirrors(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		h.mu.Lock()
		calls := len(h.mirrors)
		var last []*v1.Pod
		if calls > 0 {
			last = h.mirrors[calls-1]
		}
		h.mu.Unlock()
		if calls >= n {
			if calls > n {
				t.Fatalf("Mirrors called %d times, want %d", calls, n)
			}
			names := make([]string, len(last))
			for i, p := range last {
				names[i] = p.Namespace + "/" + p.Name
			}
			return names
		}
		if time.Now().After(deadline) {
			t.Fatalf("Mirrors called %d times, want %d", calls, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func (h *apiHarness) pods() podsClient { return podsClient{h.cs} }

type podsClient struct{ cs *fake.Clientset }

func (c podsClient) create(t *testing.T, p *v1.Pod) *v1.Pod {
	t.Helper()
	out, err := c.cs.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (c podsClient) update(t *testing.T, p *v1.Pod) *v1.Pod {
	t.Helper()
	out, err := c.cs.CoreV1().Pods(p.Namespace).Update(context.Background(), p, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (c podsClient) delete(t *testing.T, p *v1.Pod) {
	t.Helper()
	if err := c.cs.CoreV1().Pods(p.Namespace).Delete(context.Background(), p.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// apiPod is a pod as the scheduler leaves it: bound to node.
func apiPod(name, node string) *v1.Pod {
	p := testPod(name, types.UID("uid-"+name))
	p.Spec.NodeName = node
	return p
}

func mirrorPod(name, node string) *v1.Pod {
	p := apiPod(name, node)
	p.Annotations = map[string]string{ConfigMirrorAnnotation: "hash-" + name, ConfigHashAnnotation: "hash-" + name}
	return p
}

func TestAPISourceLifecycle(t *testing.T) {
	h := newAPIHarness(t, apiPod("early", "node1"))
	if u := recv(t, h.merger, 5*time.Second); describe(u) != "ADD api [default/early]" {
		t.Fatalf("first update %s", describe(u))
	}
	if !h.merger.SeenAll() || !h.src.HasSynced() {
		t.Fatal("not synced after the first list was delivered")
	}
	h.waitWatching(t)
	c := h.pods()

	a := c.create(t, apiPod("a", "node1"))
	if u := recv(t, h.merger, 5*time.Second); describe(u) != "ADD api [default/a]" {
		t.Fatalf("create: %s", describe(u))
	}
	a.Labels = map[string]string{"tier": "web"}
	a = c.update(t, a)
	if u := recv(t, h.merger, 5*time.Second); describe(u) != "UPDATE api [default/a]" {
		t.Fatalf("label change: %s", describe(u))
	}
	// Graceful deletion: the API server sets the deletion fields, which the
	// merger reports as DELETE; the object goes once the node confirms.
	now := metav1.Now()
	a.DeletionTimestamp, a.DeletionGracePeriodSeconds = &now, ptrTo(int64(30))
	c.update(t, a)
	u := recv(t, h.merger, 5*time.Second)
	if describe(u) != "DELETE api [default/a]" || *u.Pods[0].DeletionGracePeriodSeconds != 30 {
		t.Fatalf("deletionTimestamp set: %s", describe(u))
	}
	c.delete(t, a)
	if u := recv(t, h.merger, 5*time.Second); describe(u) != "REMOVE api [default/a]" {
		t.Fatalf("deleted: %s", describe(u))
	}

	// A pod of another node that gets through anyway is not run.
	c.create(t, apiPod("elsewhere", "node2"))
	noUpdate(t, h.merger, 100*time.Millisecond)

	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.selectors) < 2 {
		t.Fatalf("requests %q", h.selectors)
	}
	for _, s := range h.selectors {
		if s != "list spec.nodeName=node1" && s != "watch spec.nodeName=node1" {
			t.Errorf("request without the node's field selector: %q", s)
		}
	}
}

func TestAPISourceMirrorPods(t *testing.T) {
	h := newAPIHarness(t, apiPod("a", "node1"), mirrorPod("static-node1", "node1"))
	if u := recv(t, h.merger, 5*time.Second); describe(u) != "ADD api [default/a]" {
		t.Fatalf("first update %s", describe(u))
	}
	if got := h.lastMirrors(t, 1); fmt.Sprint(got) != "[default/static-node1]" {
		t.Fatalf("mirrors %v", got)
	}
	h.waitWatching(t)
	c := h.pods()

	// A mirror pod changes only the mirror set.
	m2 := c.create(t, mirrorPod("other-node1", "node1"))
	if got := h.lastMirrors(t, 2); len(got) != 2 {
		t.Fatalf("mirrors after create %v", got)
	}
	c.delete(t, m2)
	if got := h.lastMirrors(t, 3); fmt.Sprint(got) != "[default/static-node1]" {
		t.Fatalf("mirrors after delete %v", got)
	}
	noUpdate(t, h.merger, 50*time.Millisecond)

	// A regular pod changes only what the merger sees.
	c.create(t, apiPod("b", "node1"))
	if u := recv(t, h.merger, 5*time.Second); describe(u) != "ADD api [default/b]" {
		t.Fatalf("create: %s", describe(u))
	}
	time.Sleep(50 * time.Millisecond)
	h.lastMirrors(t, 3)
}

// runDelivery runs only the delivery loop of a source whose store the test
// feeds directly, as the reflector would, and counts the Sets it makes.
func runDelivery(t *testing.T) (*podStore, chan Update) {
	t.Helper()
	m := NewMerger(discardLogger(), APISource)
	src := NewAPISource(APIConfig{NodeName: "node1", Merger: m, Log: discardLogger()})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { src.deliver(ctx) })
	// A consumer that keeps up, as the dispatch loop does.
	out := make(chan Update, 10000)
	wg.Go(func() {
		for u := range m.Updates() {
			out <- u
		}
	})
	t.Cleanup(func() { cancel(); m.Close(); wg.Wait() })
	src.store.Replace(nil, "1")
	if u := <-out; describe(u) != "ADD api []" {
		t.Fatalf("first update %s", describe(u))
	}
	return src.store, out
}

// TestAPISourceCoalescesBursts: a burst of watch events costs a few Sets, and
// the merger still ends up with every pod.
func TestAPISourceCoalescesBursts(t *testing.T) {
	const n = 1000
	store, out := runDelivery(t)
	for i := range n {
		store.Add(versioned(apiPod(fmt.Sprintf("p%04d", i), "node1"), "2"))
	}
	sets, added := 0, 0
	for added < n {
		select {
		case u := <-out:
			if u.Op != ADD {
				t.Fatalf("unexpected %s", describe(u))
			}
			sets++
			added += len(u.Pods)
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of %d pods added", added, n)
		}
	}
	if added != n || sets > n/20 {
		t.Fatalf("%d pods took %d Sets; events are not coalesced", added, sets)
	}
	t.Logf("%d pods in %d Sets", n, sets)
}

// TestAPISourceHold: a steady trickle of events, each in its own Set if
// nothing held them, makes at most one Set per hold.
func TestAPISourceHold(t *testing.T) {
	const n = 100
	store, out := runDelivery(t)
	start := time.Now()
	for i := range n {
		store.Add(versioned(apiPod(fmt.Sprintf("p%03d", i), "node1"), "2"))
		time.Sleep(time.Millisecond)
	}
	sets, added := 0, 0
	for added < n {
		select {
		case u := <-out:
			sets++
			added += len(u.Pods)
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of %d pods added", added, n)
		}
	}
	elapsed := time.Since(start)
	if limit := int(elapsed/apiMinHold) + 2; sets > limit {
		t.Fatalf("%d Sets in %v, more than one per %v hold", sets, elapsed, apiMinHold)
	}
	t.Logf("%d pods over %v in %d Sets", n, elapsed, sets)
}

// TestAPISourceLatency: a change after a quiet spell is not held back.
func TestAPISourceLatency(t *testing.T) {
	store, out := runDelivery(t)
	var lat []time.Duration
	for i := range 15 {
		time.Sleep(2 * apiMinHold) // let the hold run out
		start := time.Now()
		store.Add(versioned(apiPod(fmt.Sprintf("p%d", i), "node1"), "2"))
		select {
		case <-out:
			lat = append(lat, time.Since(start))
		case <-time.After(5 * time.Second):
			t.Fatal("no update")
		}
	}
	slices.Sort(lat)
	if median := lat[len(lat)/2]; median >= apiMinHold/2 {
		t.Fatalf("median latency %v (all %v); the first change waits for a hold", median, lat)
	}
	t.Logf("latency median %v max %v", lat[len(lat)/2], lat[len(lat)-1])
}

// TestAPISourceWaitsForFirstList: while the API server cannot list, the
// merger never hears an (empty) snapshot that would let SeenAll remove pods.
func TestAPISourceWaitsForFirstList(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	h := &apiHarness{cs: fake.NewClientset(apiPod("a", "node1"))}
	h.cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		if fail.Load() {
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil
	})
	h.merger = NewMerger(discardLogger(), APISource, FileSource)
	logger, logs := bufferLogger()
	h.src = NewAPISource(APIConfig{Client: h.cs, NodeName: "node1", Merger: h.merger, Log: logger})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.src.Run(ctx) }()
	defer func() { cancel(); h.merger.Close(); <-done }()

	// Other sources go on meanwhile.
	h.merger.Set(FileSource, []*v1.Pod{testPod("static", "us")})
	if u := recv(t, h.merger, time.Second); describe(u) != "ADD file [default/static]" {
		t.Fatalf("file update %s", describe(u))
	}
	noUpdate(t, h.merger, 200*time.Millisecond)
	if h.merger.SeenAll() || h.src.HasSynced() {
		t.Fatal("synced without a list")
	}
	if !strings.Contains(logs.String(), "connection refused") {
		t.Errorf("the failed list is not in podline's log:\n%s", logs)
	}
	fail.Store(false) // the reflector retries with backoff
	if u := recv(t, h.merger, 10*time.Second); describe(u) != "ADD api [default/a]" {
		t.Fatalf("after the API server came back: %s", describe(u))
	}
	if !h.merger.SeenAll() {
		t.Fatal("SeenAll false after the first list")
	}
}
