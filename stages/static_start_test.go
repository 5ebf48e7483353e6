package stages_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/stages"
)

// slowStop makes stopping a container take a while, as a server finishing
// its requests does: long enough for an early start of the next version to
// show.
var slowStop = fake.Options{Latency: map[string]time.Duration{"StopContainer": 300 * time.Millisecond}}

// staticVersion is version n of a static pod's manifest: the same full
// name, a UID of its own (the content's hash, in podline).
func staticVersion(name string, n int, source string) *v1.Pod {
	return testPod(name, withEnv("VERSION", fmt.Sprint(n)), func(p *v1.Pod) {
		p.Namespace = "kube-system"
		p.UID = types.UID(fmt.Sprintf("uid-%s-v%d", name, n))
		p.Annotations = map[string]string{"kubernetes.io/config.source": source}
	})
}

// edit hands the pipeline a manifest edit as the merger emits it: REMOVE
// of the old UID, then ADD of the new one.
func (h *harness) edit(from, to *v1.Pod) {
	h.pipe.Remove(from.UID)
	h.pipe.Upsert(to)
}

func TestStaticEditStartsAfterTeardown(t *testing.T) { eachQueue(t, testStaticEditStartsAfterTeardown) }

func testStaticEditStartsAfterTeardown(t *testing.T, q stages.QueueKind) {
	h := newHarness(t, harnessOpts{queue: q, fake: slowStop})
	v1Pod, v2Pod := staticVersion("etcd", 1, "file"), staticVersion("etcd", 2, "file")
	h.pipe.Upsert(v1Pod)
	h.waitRunning(v1Pod.UID)

	watch := h.watchName(v1Pod.Name)
	h.edit(v1Pod, v2Pod)
	// While the old container takes its time to stop, the new version is
	// admitted and Pending, with nothing set up.
	st := h.waitFor(v2Pod.UID, "published while waiting", func(v1.PodStatus) bool { return true })
	if st.Phase != v1.PodPending {
		t.Fatalf("waiting version: phase %s, want Pending", st.Phase)
	}
	if n := len(h.sandboxesOf(v2Pod.UID)); n != 0 {
		t.Fatalf("waiting version has %d sandboxes", n)
	}
	if n, _ := h.admitter.Admitted(); n != 2 {
		t.Fatalf("admitted pods = %d, want both versions", n)
	}

	h.waitRunning(v2Pod.UID)
	h.waitGone(v1Pod.UID)
	obs := watch.stop()
	created := obs.created[string(v2Pod.UID)]
	if created.IsZero() || obs.lastAlive[string(v1Pod.UID)].IsZero() {
		t.Fatalf("the watch missed the switch: %+v", obs)
	}
	if last := obs.lastAlive[string(v1Pod.UID)]; created.Before(last) {
		t.Fatalf("new sandbox created %s before the old pod was last seen with a running container or ready sandbox",
			last.Sub(created))
	}
	if obs.maxSandboxes != 1 {
		t.Fatalf("%d sandboxes of the name existed at once, want 1", obs.maxSandboxes)
	}
	if n := h.fake.Calls("RunPodSandbox"); n != 2 {
		t.Fatalf("RunPodSandbox called %d times, want once per version", n)
	}
	if n := h.pipe.StaticTurns(); n != 1 {
		t.Fatalf("static turns kept = %d, want the running version's", n)
	}
}

func TestStaticQuickEditsStartOnlyTheLast(t *testing.T) {
	eachQueue(t, testStaticQuickEditsStartOnlyTheLast)
}

func testStaticQuickEditsStartOnlyTheLast(t *testing.T, q stages.QueueKind) {
	h := newHarness(t, harnessOpts{queue: q, fake: slowStop})
	v := []*v1.Pod{staticVersion("api", 1, "file"), staticVersion("api", 2, "file"), staticVersion("api", 3, "file")}
	h.pipe.Upsert(v[0])
	h.waitRunning(v[0].UID)
	h.edit(v[0], v[1])
	// Edited again while the first edit waits for the old version to stop.
	h.waitFor(v[1].UID, "published while waiting", func(v1.PodStatus) bool { return true })
	h.edit(v[1], v[2])
	h.waitRunning(v[2].UID)
	h.waitGone(v[0].UID)
	h.waitGone(v[1].UID)
	if n := h.fake.Calls("RunPodSandbox"); n != 2 {
		t.Fatalf("RunPodSandbox called %d times, want 2: the middle version must never start", n)
	}
	if n := h.fake.Calls("CreateContainer"); n != 2 {
		t.Fatalf("CreateContainer called %d times, want 2", n)
	}
	if n, _ := h.admitter.Admitted(); n != 1 {
		t.Fatalf("admitted pods = %d, want only the last version", n)
	}
}

func TestStaticRemovedWhileWaiting(t *testing.T) { eachQueue(t, testStaticRemovedWhileWaiting) }

func testStaticRemovedWhileWaiting(t *testing.T, q stages.QueueKind) {
	h := newHarness(t, harnessOpts{queue: q, fake: slowStop})
	v1Pod, v2Pod := staticVersion("sched", 1, "file"), staticVersion("sched", 2, "file")
	h.pipe.Upsert(v1Pod)
	h.waitRunning(v1Pod.UID)
	h.edit(v1Pod, v2Pod)
	h.waitFor(v2Pod.UID, "published while waiting", func(st v1.PodStatus) bool { return st.Phase == v1.PodPending })
	h.pipe.Remove(v2Pod.UID) // the manifest is deleted
	h.waitGone(v1Pod.UID)
	h.waitGone(v2Pod.UID)
	h.waitIdle()
	if n := h.fake.Calls("RunPodSandbox"); n != 1 {
		t.Fatalf("RunPodSandbox called %d times, want only the first version's", n)
	}
	if n := h.pipe.StaticTurns(); n != 0 {
		t.Fatalf("static turns left behind: %d", n)
	}
	if n, _ := h.admitter.Admitted(); n != 0 {
		t.Fatalf("admitted pods left behind: %d", n)
	}
}

// TestAPIPodsTakeNoTurns: as in the kubelet, only static pods wait for a
// pod of their name, and only for a static one.
func TestAPIPodsTakeNoTurns(t *testing.T) {
	f := func(oldSource, newSource string) {
		t.Helper()
		h := newHarness(t, harnessOpts{fake: fake.Options{Latency: map[string]time.Duration{"StopContainer": 2 * time.Second}}})
		old, next := staticVersion("web", 1, oldSource), staticVersion("web", 2, newSource)
		h.pipe.Upsert(old)
		h.waitRunning(old.UID)
		h.edit(old, next)
		h.waitRunning(next.UID)
		if !h.pipe.Known(old.UID) || len(h.sandboxesOf(old.UID)) == 0 {
			t.Fatalf("%s pod after a %s pod: started only after the old one was gone", newSource, oldSource)
		}
		h.waitGone(old.UID)
		if n := h.pipe.StaticTurns(); n != map[bool]int{true: 1, false: 0}[newSource != "api"] {
			t.Fatalf("static turns = %d", n)
		}
	}
	f("api", "api")
	f("api", "file")
	f("file", "api")
}

// waitIdle waits until no pass is in flight or due.
func (h *harness) waitIdle() {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !h.pipe.Idle() {
		if time.Now().After(deadline) {
			h.t.Fatal("pipeline never became idle")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (h *harness) sandboxesOf(uid types.UID) []*runtimeapi.PodSandbox {
	h.t.Helper()
	sbs, err := h.rt.ListPodSandbox(context.Background(), &runtimeapi.PodSandboxFilter{
		LabelSelector: map[string]string{cri.LabelPodUID: string(uid)}})
	if err != nil {
		h.t.Fatal(err)
	}
	return sbs
}

// nameWatch polls the runtime for the sandboxes and containers of one pod
// name, whatever their UID, as fast as the fake answers.
type nameWatch struct {
	done chan struct{}
	wg   sync.WaitGroup
	obs  nameObservations
}

type nameObservations struct {
	// lastAlive is, per UID, when the last listing that found a running
	// container or a ready sandbox of it began.
	lastAlive map[string]time.Time
	// created is, per UID, when the runtime created its newest sandbox.
	created      map[string]time.Time
	maxSandboxes int
}

func (h *harness) watchName(name string) *nameWatch {
	w := &nameWatch{done: make(chan struct{}), obs: nameObservations{
		lastAlive: make(map[string]time.Time), created: make(map[string]time.Time)}}
	sel := map[string]string{cri.LabelPodName: name}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for {
			select {
			case <-w.done:
				// One more listing once stopped: the one running when
				// stop was called may have listed the sandboxes before a
				// start the test already waited for, and its containers
				// after it.
				w.observe(h, sel)
				return
			default:
			}
			w.observe(h, sel)
			time.Sleep(time.Millisecond)
		}
	}()
	h.t.Cleanup(func() { w.stop() })
	return w
}

// observe lists the sandboxes and containers of the name once.
func (w *nameWatch) observe(h *harness, sel map[string]string) {
	ctx := context.Background()
	began := time.Now()
	sbs, err := h.rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: sel})
	if err != nil {
		return
	}
	ctrs, err := h.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: sel})
	if err != nil {
		return
	}
	w.obs.maxSandboxes = max(w.obs.maxSandboxes, len(sbs))
	for _, sb := range sbs {
		uid := cri.PodUIDOf(sb.Labels)
		if at := time.Unix(0, sb.CreatedAt); at.After(w.obs.created[uid]) {
			w.obs.created[uid] = at
		}
		if sb.State == runtimeapi.PodSandboxState_SANDBOX_READY {
			w.obs.lastAlive[uid] = began
		}
	}
	for _, c := range ctrs {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			w.obs.lastAlive[cri.PodUIDOf(c.Labels)] = began
		}
	}
}

func (w *nameWatch) stop() nameObservations {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	w.wg.Wait()
	return w.obs
}
