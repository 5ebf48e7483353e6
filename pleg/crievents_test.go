package pleg

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
	"github.com/podline/podline/cri/fake"
)

// exitLatency bounds how long an exit may take from the fake runtime to
// the cache. Delivery takes about a millisecond; the slack is for -race on
// a busy two-core machine.
const exitLatency = 100 * time.Millisecond

func dialFake(t *testing.T, sock string) *cri.Client {
	t.Helper()
	rt, err := cri.Dial(context.Background(), sock, "", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

func sandboxConfig(uid string, labelled bool) *runtimeapi.PodSandboxConfig {
	cfg := &runtimeapi.PodSandboxConfig{Metadata: &runtimeapi.PodSandboxMetadata{Name: "pod-" + uid, Namespace: "ns", Uid: uid}}
	if labelled {
		cfg.Labels = podLabels(uid)
	}
	return cfg
}

func startContainer(t *testing.T, rt *cri.Client, sb string, sbCfg *runtimeapi.PodSandboxConfig, name string) string {
	t.Helper()
	ctx := context.Background()
	id, err := rt.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: name}, Image: &runtimeapi.ImageSpec{Image: "busybox"},
		Labels: sbCfg.Labels,
	}, sbCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	return id
}

func containerIs(cache *Cache, uid, id string, state ContainerState, code int32) func() bool {
	return func() bool {
		c := cache.Get(types.UID(uid)).Container(id)
		return c != nil && c.State == state && c.ExitCode == code
	}
}

func TestCRIEventsFollowTheFakeRuntime(t *testing.T) {
	sock, srv := fake.Listen(t, fake.Options{})
	rt := dialFake(t, sock)
	cache := NewCache()
	n := newNotes()
	var resyncs atomic.Int32
	s := NewCRIEvents(rt, cache, n.notify, func(context.Context) error { resyncs.Add(1); return nil }, quietLog())
	if s.Healthy() == nil || s.Connected() {
		t.Fatal("healthy before connecting")
	}
	received := func() [4]uint64 {
		return [4]uint64{criEventsCreated.Get(), criEventsStarted.Get(), criEventsStopped.Get(), criEventsDeleted.Get()}
	}
	receivedBefore, appliedBefore := received(), criEventsApplied.Get()

	runEvents(t, s)
	waitFor(t, "the event stream", 2*time.Second, func() bool { return s.Connected() && srv.EventStreams() == 1 })
	if err := s.Healthy(); err != nil {
		t.Fatal(err)
	}
	if got := resyncs.Load(); got != 1 {
		t.Fatalf("%d resyncs after connecting, want 1", got)
	}

	ctx := context.Background()
	sbCfg := sandboxConfig("u1", true)
	sb, err := rt.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		t.Fatal(err)
	}
	app := startContainer(t, rt, sb, sbCfg, "app")
	waitFor(t, "the running container", time.Second, containerIs(cache, "u1", app, ContainerRunning, 0))
	p := cache.Get("u1")
	if p.Name != "pod-u1" || p.Namespace != "ns" || p.Sandbox(sb) == nil || p.Sandbox(sb).State != SandboxReady || len(p.Sandbox(sb).IPs) != 1 {
		t.Fatalf("cached pod = %+v", p)
	}
	c := p.Container(app)
	if c.SandboxID != sb || c.Name != "app" || !c.Detailed || time.Since(c.StartedAt) > time.Minute || time.Since(c.StartedAt) < 0 {
		t.Fatalf("cached container = %+v", c)
	}
	waitFor(t, "notification", time.Second, func() bool { return n.count("u1") > 0 })

	// An exit reaches the cache within an event delivery.
	exitNotes := n.count("u1")
	start := time.Now()
	if err := srv.ExitContainer(app, 3); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "exit code 3", exitLatency, containerIs(cache, "u1", app, ContainerExited, 3))
	t.Logf("exit seen after %s", time.Since(start))
	waitFor(t, "exit notification", time.Second, func() bool { return n.count("u1") == exitNotes+1 })

	side := startContainer(t, rt, sb, sbCfg, "side")
	waitFor(t, "the second container", time.Second, containerIs(cache, "u1", side, ContainerRunning, 0))
	if err := srv.ExitContainer(side, 137); err != nil { // as after SIGKILL
		t.Fatal(err)
	}
	waitFor(t, "exit code 137", exitLatency, containerIs(cache, "u1", side, ContainerExited, 137))
	if c := cache.Get("u1").Container(side); c.Reason != "Error" || c.FinishedAt.IsZero() {
		t.Fatalf("killed container = %+v", c)
	}

	if err := rt.RemoveContainer(ctx, app); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the removal", time.Second, func() bool { return cache.Get("u1").Container(app) == nil })
	if cache.Get("u1").Container(side) == nil {
		t.Fatal("removing one container dropped another")
	}
	if err := rt.RemovePodSandbox(ctx, sb); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the sandbox removal", time.Second, func() bool { return cache.Get("u1") == nil })

	// sandbox created+started, app created+started, side created+started,
	// app stopped, side stopped, app deleted, sandbox stopped, side
	// deleted, sandbox deleted: every one but the sandbox's STARTED (same
	// state as CREATED) changed the cache and notified once.
	waitFor(t, "all notifications", time.Second, func() bool { return n.total() == 11 })
	got := received()
	for i, want := range [4]uint64{3, 3, 3, 3} {
		if got[i]-receivedBefore[i] != want {
			t.Fatalf("received by type (created, started, stopped, deleted) moved by %v, want 3 each",
				[4]uint64{got[0] - receivedBefore[0], got[1] - receivedBefore[1], got[2] - receivedBefore[2], got[3] - receivedBefore[3]})
		}
	}
	if got := criEventsApplied.Get() - appliedBefore; got != 11 {
		t.Fatalf("applied moved by %d, want 11", got)
	}
	if n.count("u1") != 11 || resyncs.Load() != 1 {
		t.Fatalf("notified u1 %d times, resyncs %d", n.count("u1"), resyncs.Load())
	}
}

func TestCRIEventsIgnoreForeignPods(t *testing.T) {
	sock, srv := fake.Listen(t, fake.Options{})
	rt := dialFake(t, sock)
	cache := NewCache()
	n := newNotes()
	s := NewCRIEvents(rt, cache, n.notify, nil, quietLog())
	runEvents(t, s)
	waitFor(t, "the event stream", 2*time.Second, func() bool { return s.Connected() && srv.EventStreams() == 1 })

	ctx := context.Background()
	otherCfg := sandboxConfig("other", false)
	other, err := rt.RunPodSandbox(ctx, otherCfg, "")
	if err != nil {
		t.Fatal(err)
	}
	c := startContainer(t, rt, other, otherCfg, "app")
	if err := srv.ExitContainer(c, 1); err != nil {
		t.Fatal(err)
	}
	if err := rt.RemovePodSandbox(ctx, other); err != nil {
		t.Fatal(err)
	}
	// Events arrive in order: once podline's pod shows up, the foreign
	// events before it have been handled.
	mineCfg := sandboxConfig("mine", true)
	if _, err := rt.RunPodSandbox(ctx, mineCfg, ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "podline's pod", time.Second, func() bool { return cache.Get("mine") != nil })
	if cache.Len() != 1 || n.total() != n.count("mine") {
		t.Fatalf("foreign pod cached or notified: %d pods, %d notifications", cache.Len(), n.total())
	}
}
