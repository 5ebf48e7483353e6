package stages

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/pleg"
)

func TestKillWaves(t *testing.T) {
	k := func(name string) KillAction { return KillAction{ID: name + "1", Name: name} }
	f := func(name string, pod *v1.Pod, kills []KillAction, want [][]KillAction) {
		t.Helper()
		if got := killWaves(pod, kills); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
	pod := unitPod(withInits("log", "setup", "proxy"), withSidecars("log", "proxy"), withApps("a", "b"))

	f("no sidecars: one wave", unitPod(withApps("a", "b")), []KillAction{k("a"), k("b")},
		[][]KillAction{{k("a"), k("b")}})
	f("app containers together first, then each sidecar alone, last in the spec first", pod,
		[]KillAction{k("log"), k("a"), k("proxy"), k("b")},
		[][]KillAction{{k("a"), k("b")}, {k("proxy")}, {k("log")}})
	f("an ordinary init container and a stray stop with the app containers", pod,
		[]KillAction{k("proxy"), k("setup"), k("gone")},
		[][]KillAction{{k("setup"), k("gone")}, {k("proxy")}})
	f("only sidecars left", pod, []KillAction{k("log"), k("proxy")},
		[][]KillAction{{k("proxy")}, {k("log")}})
	old := KillAction{ID: "proxy0", Name: "proxy", SandboxID: "sb0"}
	f("two instances of one sidecar stop together", pod, []KillAction{k("proxy"), old, k("a")},
		[][]KillAction{{k("a")}, {k("proxy"), old}})
	f("an orphan (no spec): one wave", nil, []KillAction{k("log"), k("a")},
		[][]KillAction{{k("log"), k("a")}})
	f("nothing to stop", pod, nil, nil)
}

func TestWaveGrace(t *testing.T) {
	for _, c := range []struct{ grace, elapsed, want time.Duration }{
		{30 * time.Second, 0, 30 * time.Second},
		{30 * time.Second, 12 * time.Second, 18 * time.Second},
		{30 * time.Second, 29 * time.Second, minKillGrace},
		{30 * time.Second, time.Minute, minKillGrace},
	} {
		if got := waveGrace(c.grace, c.elapsed); got != c.want {
			t.Errorf("waveGrace(%v, %v) = %v, want %v", c.grace, c.elapsed, got, c.want)
		}
	}
}

// stopRecorder is a ContainerRuntime that records the stops it is asked
// for and finishes each after a delay, so a stop that did not wait for
// the ones before it shows in the order.
type stopRecorder struct {
	mu    sync.Mutex
	stops []string
	grace map[string]time.Duration
	delay map[string]time.Duration
}

func (r *stopRecorder) StopContainer(_ context.Context, id string, grace time.Duration) error {
	time.Sleep(r.delay[id])
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stops = append(r.stops, id)
	r.grace[id] = grace
	return nil
}

func (r *stopRecorder) ContainerStatus(_ context.Context, id string) (*runtimeapi.ContainerStatus, error) {
	return &runtimeapi.ContainerStatus{Id: id, State: runtimeapi.ContainerState_CONTAINER_EXITED, ExitCode: 143,
		Metadata: &runtimeapi.ContainerMetadata{Name: id[:len(id)-1]}}, nil
}

func (r *stopRecorder) CreateContainer(context.Context, string, *runtimeapi.ContainerConfig, *runtimeapi.PodSandboxConfig) (string, error) {
	panic("not used")
}
func (r *stopRecorder) StartContainer(context.Context, string) error { panic("not used") }
func (r *stopRecorder) ExecSync(context.Context, string, []string, time.Duration) (*runtimeapi.ExecSyncResponse, error) {
	panic("not used")
}
func (r *stopRecorder) RemoveContainer(context.Context, string) error { panic("not used") }

// A deleted pod's app containers stop first, all together; then its
// sidecars one at a time, last in the spec first, each with what is left
// of the grace period.
func TestTeardownStopsSidecarsLast(t *testing.T) {
	pod := unitPod(withInits("log", "setup", "proxy"), withSidecars("log", "proxy"), withApps("a", "b"))
	pod.DeletionTimestamp = &metav1.Time{Time: baseTime}
	pod.DeletionGracePeriodSeconds = ptrOf(int64(30))
	cache := pleg.NewCache()
	cache.UpsertSandbox(pod.UID, pod.Name, pod.Namespace, rtReady("sb1", 1))
	for _, c := range []*pleg.Container{
		rtRunning("log1", "sb1", "log", 0), rtExited("setup1", "sb1", "setup", 0, 0, baseTime),
		rtRunning("proxy1", "sb1", "proxy", 0), rtRunning("a1", "sb1", "a", 0), rtRunning("b1", "sb1", "b", 0),
	} {
		cache.UpsertContainer(pod.UID, c)
	}
	// b is slow to stop: were the sidecars not waiting for it, they
	// would stop before it.
	rec := &stopRecorder{grace: map[string]time.Duration{},
		delay: map[string]time.Duration{"a1": 10 * time.Millisecond, "b1": 300 * time.Millisecond}}
	s := &ContainerStage{Runtime: rec, Cache: cache}
	out := s.Handle(&Work{UID: pod.UID, Pod: pod, Sync: &PodSync{}, Teardown: true, ctx: context.Background()})
	if out.Async == nil {
		t.Fatal("teardown planned no stop")
	}
	if err := out.Async(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a1", "b1", "proxy1", "log1"}; !reflect.DeepEqual(rec.stops, want) {
		t.Errorf("stopped %v, want %v", rec.stops, want)
	}
	full := 30 * time.Second
	if rec.grace["a1"] != full || rec.grace["b1"] != full {
		t.Errorf("app containers got %v and %v to stop, want the whole %v", rec.grace["a1"], rec.grace["b1"], full)
	}
	if g := rec.grace["proxy1"]; g >= full-250*time.Millisecond || g < full-5*time.Second {
		t.Errorf("proxy got %v to stop, want what is left of %v after b's 300ms", g, full)
	}
	if g := rec.grace["log1"]; g > rec.grace["proxy1"] {
		t.Errorf("log got %v to stop, more than proxy before it (%v)", g, rec.grace["proxy1"])
	}
	for _, id := range []string{"a1", "b1", "proxy1", "log1"} {
		if c := cache.Get(pod.UID).Container(id); c == nil || c.State != pleg.ContainerExited {
			t.Errorf("%s: cache has %+v after the stop, want it exited", id, c)
		}
	}
}

// An orphan's containers (their pod deleted while podline was down) stop
// within the grace period recorded on each when it was made; only one
// without a recorded grace gets the default 30 s. A pod that a source
// still has stops within its own, latest grace period instead.
func TestOrphanStopsWithinRecordedGrace(t *testing.T) {
	const uid = "orphan-uid"
	cache := pleg.NewCache()
	cache.UpsertSandbox(uid, "web", "shop", rtReady("sb1", 0))
	recorded := func(c *pleg.Container, secs int64) *pleg.Container { c.Grace = &secs; return c }
	for _, c := range []*pleg.Container{
		recorded(rtRunning("a1", "sb1", "a", 0), 5),
		recorded(rtRunning("b1", "sb1", "b", 0), 120),
		recorded(rtRunning("z1", "sb1", "z", 0), 0),
		rtRunning("n1", "sb1", "n", 0),
	} {
		cache.UpsertContainer(uid, c)
	}
	stop := func(pod *v1.Pod) map[string]time.Duration {
		t.Helper()
		rec := &stopRecorder{grace: map[string]time.Duration{}}
		s := &ContainerStage{Runtime: rec, Cache: cache}
		out := s.Handle(&Work{UID: uid, Pod: pod, Sync: &PodSync{}, Teardown: true, Removed: true, ctx: context.Background()})
		if out.Async == nil {
			t.Fatal("teardown planned no stop")
		}
		if err := out.Async(context.Background()); err != nil {
			t.Fatal(err)
		}
		return rec.grace
	}
	want := map[string]time.Duration{"a1": 5 * time.Second, "b1": 2 * time.Minute, "z1": minKillGrace, "n1": 30 * time.Second}
	if got := stop(nil); !reflect.DeepEqual(got, want) {
		t.Errorf("orphan stopped with %v, want %v", got, want)
	}

	// The same containers, their pod known and being deleted with 10 s.
	for _, id := range []string{"a2", "b2", "z2", "n2"} {
		cache.UpsertContainer(uid, recorded(rtRunning(id, "sb1", id[:1], 1), 5))
	}
	pod := unitPod(withApps("a", "b", "z", "n"))
	pod.UID = uid
	pod.DeletionTimestamp = &metav1.Time{Time: baseTime}
	pod.DeletionGracePeriodSeconds = ptrOf(int64(10))
	want = map[string]time.Duration{"a2": 10 * time.Second, "b2": 10 * time.Second, "z2": 10 * time.Second, "n2": 10 * time.Second}
	if got := stop(pod); !reflect.DeepEqual(got, want) {
		t.Errorf("known pod stopped with %v, want its own %v", got, want)
	}
}
