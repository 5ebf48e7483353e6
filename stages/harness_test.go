package stages_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/cri"
	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/pleg"
	"github.com/podline/podline/pullrecords"
	"github.com/podline/podline/stages"
)

// harness is a whole pipeline against the fake CRI: the same handlers
// podline wires, a relist for runtime changes, and helpers to wait for a
// pod to reach a state.
type harness struct {
	t        testing.TB
	fake     *fake.Server
	rt       *cri.Client
	cache    *pleg.Cache
	store    *stages.StatusStore
	pipe     *stages.Pipeline
	relist   *pleg.Relister
	admitter *stages.Admitter
	node     *stages.Node
	cancel   context.CancelFunc
	done     sync.WaitGroup
	stopped  bool
}

type harnessOpts struct {
	window  int
	maxPods int
	queue   stages.QueueKind
	// workers per stage; zero means a few per stage.
	workers [stages.NumStages]int
	// relist is the runtime relist period; zero means 50ms, so that tests
	// see container exits quickly.
	relist time.Duration
	fake   fake.Options
	// socket reuses a running fake (restart tests).
	socket string
	srv    *fake.Server
	node   *stages.Node
	events stages.Recorder
	// pulls and pullSecrets go to the containers stage (nil: its own
	// serializing puller, no secrets).
	pulls       *stages.ImagePuller
	pullSecrets stages.PullSecretSource
	// records, without pulls, give the containers stage a serializing
	// puller that checks and records image pulls with them.
	records *pullrecords.Store
	// starts is the start gate (nil: none).
	starts *stages.StartGate
	// limits makes pod cgroups (nil: none); podPids is the node's
	// --pod-max-pids.
	limits  stages.PodCgroups
	podPids *int64
	// requestTimeout bounds each runtime call (zero: 5 s).
	requestTimeout time.Duration
}

func newHarness(t testing.TB, o harnessOpts) *harness {
	t.Helper()
	if o.socket == "" {
		o.socket, o.srv = fake.Listen(t, o.fake)
	}
	ctx, cancel := context.WithCancel(context.Background())
	timeout := o.requestTimeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	rt, err := cri.Dial(ctx, o.socket, "", timeout)
	if err != nil {
		t.Fatal(err)
	}
	node := o.node
	if node == nil {
		node = &stages.Node{
			Name: "node-a", IPs: []string{"192.0.2.10"}, CPUMilli: 4000, MemoryBytes: 8 << 30,
			MaxPods: o.maxPods, RootDir: t.TempDir(), LogsDir: t.TempDir(),
			Cgroups: cgroupfs.Layout{Root: "/", PerQOS: true},
		}
	}
	h := &harness{t: t, fake: o.srv, rt: rt, cache: pleg.NewCache(), store: stages.NewStatusStore(), node: node, cancel: cancel}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	h.admitter = &stages.Admitter{Node: node, Events: o.events}
	var handlers [stages.NumStages]stages.Handler
	handlers[stages.StageAdmit] = h.admitter
	handlers[stages.StageVolumes] = &stages.VolumeStage{Node: node, Events: o.events}
	handlers[stages.StageSandbox] = &stages.SandboxStage{Runtime: rt, Cache: h.cache, Node: node, Events: o.events,
		Limits: o.limits, PodPidsLimit: o.podPids}
	if o.pulls == nil && o.records != nil {
		o.pulls = stages.NewImagePuller(rt, o.records, true, 0)
	}
	handlers[stages.StageContainers] = &stages.ContainerStage{Runtime: rt, Images: rt, Cache: h.cache, Node: node, Events: o.events,
		Pulls: o.pulls, PullSecrets: o.pullSecrets}
	status := &stages.StatusStage{Store: h.store, Cache: h.cache, Node: node,
		RuntimeName: "fake", OnFinished: h.admitter.Release, Log: log}
	handlers[stages.StageStatus] = status
	h.admitter.OnAdmitted = status.PublishPending
	window := o.window
	if window == 0 {
		window = 64
	}
	workers := o.workers
	if workers == ([stages.NumStages]int{}) {
		workers = [stages.NumStages]int{2, 2, 8, 8, 2}
	}
	h.pipe, err = stages.New(stages.Config{
		Window: window, Workers: workers, Handlers: handlers, Queue: o.queue, Starts: o.starts,
		Cache: h.cache, Log: log,
		OnTornDown: func(uid types.UID, removed bool) { h.admitter.Release(uid) },
	})
	if err != nil {
		t.Fatal(err)
	}
	relist := o.relist
	if relist == 0 {
		relist = 50 * time.Millisecond
	}
	h.relist = pleg.NewRelister(rt, h.cache, relist, h.pipe.Sync, log)
	h.done.Add(1)
	go func() { defer h.done.Done(); h.pipe.Run(ctx) }()
	if err := h.relist.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	h.done.Add(1)
	go func() { defer h.done.Done(); h.relist.Run(ctx) }()
	t.Cleanup(h.stop)
	return h
}

// eachQueue runs test once per stage queue implementation, as subtests
// named after the kind.
func eachQueue(t *testing.T, test func(t *testing.T, q stages.QueueKind)) {
	t.Helper()
	for _, q := range stages.QueueKinds() {
		t.Run(q.String(), func(t *testing.T) { test(t, q) })
	}
}

func (h *harness) stop() {
	if h.stopped {
		return
	}
	h.stopped = true
	h.cancel()
	h.done.Wait()
	h.rt.Close()
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// waitFor polls the published status until cond holds.
func (h *harness) waitFor(uid types.UID, what string, cond func(st v1.PodStatus) bool) v1.PodStatus {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var st v1.PodStatus
	for time.Now().Before(deadline) {
		var ok bool
		if st, _, ok = h.store.Status(uid); ok && cond(st) {
			return st
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.t.Fatalf("pod %s never became %s; last status: phase=%s containers=%+v", uid, what, st.Phase, st.ContainerStatuses)
	return st
}

func (h *harness) waitRunning(uid types.UID) v1.PodStatus {
	h.t.Helper()
	return h.waitFor(uid, "Running", func(st v1.PodStatus) bool {
		return st.Phase == v1.PodRunning && allReady(st)
	})
}

// waitRunningFast spins on the store without logging, for benchmarks.
func (h *harness) waitRunningFast(uid types.UID) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		st, _, ok := h.store.Status(uid)
		if ok && st.Phase == v1.PodRunning && allReady(st) {
			return
		}
		if st.Phase == v1.PodFailed {
			break
		}
		time.Sleep(time.Millisecond)
	}
	st, _, ok := h.store.Status(uid)
	h.t.Fatalf("pod %s not Running: known=%v published=%v %+v", uid, h.pipe.Known(uid), ok, st)
}

func allReady(st v1.PodStatus) bool {
	for _, c := range st.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// waitGone waits until the pipeline forgot the pod and the runtime holds
// nothing of it.
func (h *harness) waitGone(uid types.UID) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		sbs, err := h.rt.ListPodSandbox(context.Background(), nil)
		if err != nil {
			h.t.Fatal(err)
		}
		left := 0
		for _, sb := range sbs {
			if cri.PodUIDOf(sb.Labels) == string(uid) {
				left++
			}
		}
		if _, _, ok := h.store.Status(uid); !ok && left == 0 && !h.pipe.Known(uid) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	h.t.Fatalf("pod %s was not torn down", uid)
}

// testPod is a one-container pod.
func testPod(name string, mutate ...func(*v1.Pod)) *v1.Pod {
	grace := int64(1)
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{
			RestartPolicy:                 v1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			Containers: []v1.Container{{
				Name: "app", Image: "busybox:1.36", ImagePullPolicy: v1.PullIfNotPresent,
				Command: []string{"sleep", "3600"},
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU: resource.MustParse("10m"),
				}},
			}},
		},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func withEnv(name, value string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, v1.EnvVar{Name: name, Value: value})
	}
}

func withPolicy(rp v1.RestartPolicy) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.RestartPolicy = rp }
}
