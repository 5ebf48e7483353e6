package pleg_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/pleg"
)

type notified struct {
	mu   sync.Mutex
	uids map[types.UID]int
}

func (n *notified) notify(uid types.UID) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.uids[uid]++
}

func (n *notified) take() map[types.UID]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := n.uids
	n.uids = map[types.UID]int{}
	return out
}

func TestRelistFollowsTheRuntime(t *testing.T) {
	sock, srv := fake.Listen(t, fake.Options{})
	ctx := context.Background()
	rt, err := cri.Dial(ctx, sock, "", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	cache := pleg.NewCache()
	n := &notified{uids: map[types.UID]int{}}
	r := pleg.NewRelister(rt, cache, time.Hour, n.notify, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if r.Healthy() == nil {
		t.Fatal("healthy before any relist")
	}

	labels := map[string]string{cri.LabelPodUID: "u1", cri.LabelPodName: "p", cri.LabelPodNamespace: "ns"}
	sbCfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "ns", Uid: "u1"}, Labels: labels}
	sb, err := rt.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		t.Fatal(err)
	}
	// Not podline's: no pod UID label. The relist must ignore it.
	if _, err := rt.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "other", Namespace: "ns", Uid: "x"}}, ""); err != nil {
		t.Fatal(err)
	}
	ctr, err := rt.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Image: &runtimeapi.ImageSpec{Image: "busybox"},
		Labels: labels, Annotations: map[string]string{cri.AnnotationContainerHash: "h1"},
	}, sbCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.StartContainer(ctx, ctr); err != nil {
		t.Fatal(err)
	}

	if err := r.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Healthy(); err != nil {
		t.Fatal(err)
	}
	if got := n.take(); len(got) != 1 || got["u1"] != 1 {
		t.Fatalf("notified %v, want u1 once", got)
	}
	p := cache.Get("u1")
	if p == nil || p.Name != "p" || p.Namespace != "ns" || len(p.Sandboxes) != 1 || len(p.Sandboxes[0].IPs) != 1 {
		t.Fatalf("cached pod = %+v", p)
	}
	c := p.Latest("app")
	if c == nil || c.State != pleg.ContainerRunning || c.Hash != "h1" || !c.Detailed || c.StartedAt.IsZero() {
		t.Fatalf("cached container = %+v", c)
	}
	if cache.Len() != 1 {
		t.Fatalf("cache holds %d pods; the unlabelled sandbox must be ignored", cache.Len())
	}

	// Nothing changed: no inspection, no notification.
	before := srv.Calls("ContainerStatus")
	if err := r.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	if got := n.take(); len(got) != 0 {
		t.Fatalf("an unchanged runtime notified %v", got)
	}
	if srv.Calls("ContainerStatus") != before {
		t.Fatal("an unchanged container was inspected again")
	}

	// A fresh relister over the same cache (as after the events filled
	// it) inspects nothing the cache already holds in the listed state.
	fresh := pleg.NewRelister(rt, cache, time.Hour, n.notify, slog.New(slog.NewTextHandler(io.Discard, nil)))
	sbBefore := srv.Calls("PodSandboxStatus")
	if err := fresh.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	if srv.Calls("ContainerStatus") != before || srv.Calls("PodSandboxStatus") != sbBefore {
		t.Fatal("a relister new to the runtime inspected what the cache already held")
	}
	if got := n.take(); len(got) != 0 {
		t.Fatalf("a fresh relist of an unchanged runtime notified %v", got)
	}

	// An exit is seen with its code.
	if err := srv.ExitContainer(ctr, 3); err != nil {
		t.Fatal(err)
	}
	if err := r.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	if got := n.take(); got["u1"] != 1 {
		t.Fatalf("exit not notified: %v", got)
	}
	if c := cache.Get("u1").Latest("app"); c.State != pleg.ContainerExited || c.ExitCode != 3 {
		t.Fatalf("after exit: %+v", c)
	}

	// Removal empties the cache.
	if err := rt.RemovePodSandbox(ctx, sb); err != nil {
		t.Fatal(err)
	}
	if err := r.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	if got := n.take(); got["u1"] != 1 {
		t.Fatalf("removal not notified: %v", got)
	}
	if cache.Get("u1") != nil {
		t.Fatalf("removed pod still cached: %+v", cache.Get("u1"))
	}
}

// The first listing loads what ran before the process started: exits in it
// are old news, not changes an event stream missed. Later ones are.
func TestFirstRelistIsNoDiscrepancy(t *testing.T) {
	sock, srv := fake.Listen(t, fake.Options{})
	ctx := context.Background()
	rt, err := cri.Dial(ctx, sock, "", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	labels := map[string]string{cri.LabelPodUID: "u1", cri.LabelPodName: "p", cri.LabelPodNamespace: "ns"}
	sbCfg := &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "ns", Uid: "u1"}, Labels: labels}
	sb, err := rt.RunPodSandbox(ctx, sbCfg, "")
	if err != nil {
		t.Fatal(err)
	}
	start := func(name string) string {
		id, err := rt.CreateContainer(ctx, sb, &runtimeapi.ContainerConfig{
			Metadata: &runtimeapi.ContainerMetadata{Name: name}, Image: &runtimeapi.ImageSpec{Image: "busybox"},
			Labels: labels}, sbCfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.StartContainer(ctx, id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	exited, running, caught := start("old"), start("app"), start("caught")
	if err := srv.ExitContainer(exited, 1); err != nil {
		t.Fatal(err)
	}

	cache := pleg.NewCache()
	r := pleg.NewRelister(rt, cache, time.Hour, func(types.UID) {}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	const grace = 50 * time.Millisecond
	r.Audit(grace)
	before := pleg.Discrepancies()
	if err := r.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	settled := func() {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for r.Settling() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	settled()
	if d := pleg.Discrepancies() - before; d != 0 {
		t.Fatalf("the first listing counted %d discrepancies", d)
	}

	// Two exits: one an event brings within the grace after the listing
	// found it, one nothing brings. Only the second is missed.
	for _, id := range []string{running, caught} {
		if err := srv.ExitContainer(id, 2); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Relist(ctx); err != nil {
		t.Fatal(err)
	}
	if c := cache.Get("u1").Container(running); c == nil || c.State == pleg.ContainerExited {
		t.Fatalf("an audit applied the exit before its grace: %+v", c)
	}
	st, err := rt.ContainerStatus(ctx, caught)
	if err != nil {
		t.Fatal(err)
	}
	cache.UpsertContainer("u1", pleg.ContainerFromStatus(st, sb)) // the event, late
	settled()
	if d := pleg.Discrepancies() - before; d != 1 {
		t.Fatalf("one exit no event delivered counted %d discrepancies, want 1", d)
	}
	if c := cache.Get("u1").Container(running); c == nil || c.State != pleg.ContainerExited || c.ExitCode != 2 {
		t.Fatalf("after the grace the audit did not apply the exit: %+v", c)
	}
}
