package pleg

import (
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// These tests drive apply directly, one event at a time, so ordering and
// timing are exact.

func newApplySource() (*CRIEvents, *Cache) {
	cache := NewCache()
	return NewCRIEvents(nil, cache, func(types.UID) {}, nil, quietLog()), cache
}

const t0 = int64(1_795_000_000_000_000_000) // ns

var now0 = time.Unix(0, t0)

func TestCRIEventsApplyLifecycle(t *testing.T) {
	s, cache := newApplySource()
	f := func(ev *runtimeapi.ContainerEventResponse, wantChanged bool) {
		t.Helper()
		uid, changed, stale := s.apply(ev, now0)
		if uid != "u1" || changed != wantChanged || stale {
			t.Fatalf("apply %s %s = %q changed %v stale %v, want u1 changed %v", ev.ContainerEventType, ev.ContainerId, uid, changed, stale, wantChanged)
		}
	}
	sb := sbStatus("sb1", "u1", sbReady)
	f(event(evCreated, "sb1", t0, sb), true)
	f(event(evStarted, "sb1", t0+1, sb), false) // same state: nothing to tell

	running := ctrStatus("c1", "u1", "app", ctrRunning, 0)
	running.CreatedAt, running.StartedAt = t0+2, t0+3
	f(event(evStarted, "c1", t0+3, sb, running), true)
	p := cache.Get("u1")
	if p.Name != "pod-u1" || p.Namespace != "ns" || p.Sandbox("sb1").State != SandboxReady || len(p.Sandbox("sb1").IPs) != 1 {
		t.Fatalf("pod = %+v", p)
	}
	c := p.Container("c1")
	if c == nil || c.State != ContainerRunning || c.SandboxID != "sb1" || !c.Detailed || !c.StartedAt.Equal(time.Unix(0, t0+3)) {
		t.Fatalf("container = %+v", c)
	}

	exited := ctrStatus("c1", "u1", "app", ctrExited, 137)
	f(event(evStopped, "c1", t0+4, sb, exited), true)
	if c := cache.Get("u1").Container("c1"); c.State != ContainerExited || c.ExitCode != 137 {
		t.Fatalf("after exit: %+v", c)
	}
	f(event(evDeleted, "c1", t0+5, sb), true)
	if cache.Get("u1").Container("c1") != nil {
		t.Fatal("deleted container still cached")
	}
	// The sandbox's own DELETED event carries no status: what earlier
	// events taught names the pod.
	f(event(evStopped, "sb1", t0+6, sbStatus("sb1", "u1", sbNotReady)), true)
	f(event(evDeleted, "sb1", t0+7, nil), true)
	if cache.Get("u1") != nil {
		t.Fatalf("removed pod still cached: %+v", cache.Get("u1"))
	}
}

func TestCRIEventsApplyIgnoresForeignObjects(t *testing.T) {
	s, cache := newApplySource()
	sb := sbStatus("sbx", "", sbReady)
	for _, ev := range []*runtimeapi.ContainerEventResponse{
		event(evCreated, "sbx", t0, sb),
		event(evStarted, "cx", t0+1, sb, ctrStatus("cx", "", "app", ctrRunning, 0)),
		event(evDeleted, "cx", t0+2, sb),
		event(evDeleted, "sbx", t0+3, nil),
		// No sandbox status and no labels anywhere.
		event(evStopped, "cy", t0+4, nil, ctrStatus("cy", "", "app", ctrExited, 1)),
	} {
		if uid, changed, stale := s.apply(ev, now0); uid != "" || changed || stale {
			t.Fatalf("foreign %s %s: uid %q changed %v stale %v", ev.ContainerEventType, ev.ContainerId, uid, changed, stale)
		}
	}
	if cache.Len() != 0 || len(s.objects.byID) != 0 {
		t.Fatalf("foreign objects recorded: cache %d, table %d", cache.Len(), len(s.objects.byID))
	}
}

// A state the cache would take (anything replaces UNKNOWN) is still refused
// when the event that brings it is older than the one applied last.
func TestCRIEventsApplyRefusesStaleEvents(t *testing.T) {
	s, cache := newApplySource()
	sb := sbStatus("sb1", "u1", sbReady)
	s.apply(event(evCreated, "sb1", t0, sb), now0)

	staleBefore := criEventsStale.Get()
	_, changed, stale := s.apply(event(evStopped, "c1", t0+200, sb, ctrStatus("c1", "u1", "app", ctrUnknown, 0)), now0)
	if !changed || stale {
		t.Fatalf("newer event: changed %v stale %v", changed, stale)
	}
	_, changed, stale = s.apply(event(evStarted, "c1", t0+100, sb, ctrStatus("c1", "u1", "app", ctrRunning, 0)), now0)
	if changed || !stale {
		t.Fatalf("older event: changed %v stale %v, want ignored as stale", changed, stale)
	}
	if c := cache.Get("u1").Container("c1"); c.State != ContainerUnknown {
		t.Fatalf("a stale event replaced the state: %+v", c)
	}

	// An event about another container, older than the last event that
	// showed c1: its own container counts, its snapshot of c1 does not.
	_, changed, stale = s.apply(event(evCreated, "c2", t0+150, sb,
		ctrStatus("c1", "u1", "app", ctrRunning, 0), ctrStatus("c2", "u1", "side", ctrCreated, 0)), now0)
	if !changed || stale {
		t.Fatalf("event for c2: changed %v stale %v", changed, stale)
	}
	p := cache.Get("u1")
	if p.Container("c1").State != ContainerUnknown || p.Container("c2").State != ContainerCreated {
		t.Fatalf("c1 %s c2 %v", p.Container("c1").State, p.Container("c2"))
	}
	// The handle path counts what apply decided.
	s.handle(event(evStarted, "c1", t0+100, sb, ctrStatus("c1", "u1", "app", ctrRunning, 0)))
	if got := criEventsStale.Get() - staleBefore; got != 1 {
		t.Fatalf("stale counter moved by %d, want 1", got)
	}

	// The runtime's clock set back an hour: its next events are stamped
	// long before the newest applied, which no reordering explains. They
	// are news, not stale: the exit is seen, not left to the relist.
	hour := int64(time.Hour)
	_, changed, stale = s.apply(event(evStarted, "c2", t0+300-hour, sb, ctrStatus("c2", "u1", "side", ctrRunning, 0)), now0)
	if !changed || stale {
		t.Fatalf("after the runtime's clock was set back: changed %v stale %v, want the start applied", changed, stale)
	}
	_, changed, stale = s.apply(event(evStopped, "c2", t0+400-hour, sb, ctrStatus("c2", "u1", "side", ctrExited, 2)), now0)
	if c := cache.Get("u1").Container("c2"); !changed || stale || c.State != ContainerExited {
		t.Fatalf("exit after the runtime's clock was set back: changed %v stale %v, c2 %+v", changed, stale, c)
	}

	// Control: without the timestamps the cache alone would have taken it.
	s2, cache2 := newApplySource()
	s2.apply(event(evStopped, "c1", 0, sb, ctrStatus("c1", "u1", "app", ctrUnknown, 0)), now0)
	s2.apply(event(evStarted, "c1", 0, sb, ctrStatus("c1", "u1", "app", ctrRunning, 0)), now0)
	if c := cache2.Get("u1").Container("c1"); c.State != ContainerRunning {
		t.Fatalf("control: %+v", c)
	}
}

// Timestamps are compared after reading their units: an event stamped in
// seconds is newer than one stamped in nanoseconds ten seconds earlier.
func TestCRIEventsApplyMixedTimestampUnits(t *testing.T) {
	s, cache := newApplySource()
	sb := sbStatus("sb1", "u1", sbReady)
	newer := ctrStatus("c1", "u1", "app", ctrUnknown, 0)
	newer.CreatedAt = 1_795_000_000          // seconds
	newer.StartedAt = 1_795_000_001_000      // milliseconds
	newer.FinishedAt = 1_795_000_002_000_000 // microseconds
	s.apply(event(evStopped, "c1", 1_795_000_060, sb, newer), now0)
	c := cache.Get("u1").Container("c1")
	if !c.CreatedAt.Equal(time.Unix(1_795_000_000, 0)) || !c.StartedAt.Equal(time.Unix(1_795_000_001, 0)) ||
		!c.FinishedAt.Equal(time.Unix(1_795_000_002, 0)) {
		t.Fatalf("container times %v %v %v", c.CreatedAt, c.StartedAt, c.FinishedAt)
	}
	_, changed, stale := s.apply(event(evStarted, "c1", 1_795_000_050_000_000_000, sb, ctrStatus("c1", "u1", "app", ctrRunning, 0)), now0)
	if changed || !stale {
		t.Fatalf("ns event ten seconds older: changed %v stale %v", changed, stale)
	}
	sbSec := sbStatus("sb2", "u2", sbReady)
	sbSec.CreatedAt = 1_795_000_000
	s.apply(event(evCreated, "sb2", 1_795_000_000, sbSec), now0)
	if got := cache.Get("u2").Sandbox("sb2").CreatedAt; !got.Equal(time.Unix(1_795_000_000, 0)) {
		t.Fatalf("sandbox created at %v", got)
	}
}

// An event sent before a deletion but delivered after it must not bring
// the object back; the memory of the deletion expires.
func TestCRIEventsApplyDeletionIsFinal(t *testing.T) {
	s, cache := newApplySource()
	sb := sbStatus("sb1", "u1", sbReady)
	s.apply(event(evStarted, "c1", t0+1, sb, ctrStatus("c1", "u1", "app", ctrRunning, 0)), now0)
	s.apply(event(evDeleted, "c1", t0+3, sb), now0)
	_, changed, stale := s.apply(event(evStopped, "c1", t0+2, sb, ctrStatus("c1", "u1", "app", ctrExited, 0)), now0)
	if changed || !stale || cache.Get("u1").Container("c1") != nil {
		t.Fatalf("late event after deletion: changed %v stale %v cached %v", changed, stale, cache.Get("u1").Container("c1"))
	}
	// A snapshot of c1 riding on another container's event is ignored too.
	s.apply(event(evCreated, "c2", t0+4, sb, ctrStatus("c1", "u1", "app", ctrExited, 0), ctrStatus("c2", "u1", "b", ctrCreated, 0)), now0)
	if cache.Get("u1").Container("c1") != nil || cache.Get("u1").Container("c2") == nil {
		t.Fatalf("containers = %+v", cache.Get("u1").Containers)
	}

	// Removing the sandbox buries its containers with it.
	s.apply(event(evDeleted, "sb1", t0+5, nil), now0)
	if cache.Get("u1") != nil {
		t.Fatalf("pod still cached: %+v", cache.Get("u1"))
	}
	for _, id := range []string{"c1", "c2", "sb1"} {
		if o := s.objects.byID[id]; o == nil || !o.deleted {
			t.Fatalf("%s not remembered as deleted: %+v", id, o)
		}
	}
	s.apply(event(evStopped, "c2", t0+4, sb, ctrStatus("c2", "u1", "b", ctrExited, 0)), now0)
	if cache.Get("u1") != nil {
		t.Fatalf("late events resurrected the pod: %+v", cache.Get("u1"))
	}

	// After tombstoneTTL the table forgets them.
	s.apply(event(evCreated, "sb9", t0+9, sbStatus("sb9", "u9", sbReady)), now0.Add(tombstoneTTL))
	if len(s.objects.byID) != 1 || len(s.objects.graves) != 0 {
		t.Fatalf("table after expiry: %d objects, %d graves", len(s.objects.byID), len(s.objects.graves))
	}
}

// After a podline restart the relist fills the cache; a sandbox's DELETED
// event then names an object no event described.
func TestCRIEventsApplyDeletionOfRelistedObjects(t *testing.T) {
	s, cache := newApplySource()
	cache.UpsertSandbox("u1", "p", "ns", &Sandbox{ID: "sb1", State: SandboxNotReady})
	cache.UpsertContainer("u1", &Container{ID: "c1", SandboxID: "sb1", Name: "app", State: ContainerExited})
	cache.UpsertSandbox("u2", "q", "ns", &Sandbox{ID: "sb2", State: SandboxReady})

	if uid, changed, _ := s.apply(event(evDeleted, "sb1", t0, nil), now0); uid != "u1" || !changed {
		t.Fatalf("sandbox deletion: uid %q changed %v", uid, changed)
	}
	if cache.Get("u1") != nil || cache.Get("u2") == nil {
		t.Fatalf("u1 %+v u2 %+v", cache.Get("u1"), cache.Get("u2"))
	}
	if o := s.objects.byID["c1"]; o == nil || !o.deleted {
		t.Fatal("the sandbox's container is not remembered as deleted")
	}
}

// A sandbox deleted before any event described it (so not known to be a
// sandbox) keeps out the containers a later event carries with its status:
// they would hang under a sandbox the pod does not have. Found by
// FuzzCRIEventsApply.
func TestCRIEventsApplyContainersOfDeletedSandbox(t *testing.T) {
	s, cache := newApplySource()
	s.apply(event(evDeleted, "sb1", t0, nil, ctrStatus("c1", "u1", "app", ctrExited, 0)), now0)
	s.apply(event(evCreated, "c3", t0+1, sbStatus("sb1", "u1", sbReady), ctrStatus("c1", "u1", "app", ctrExited, 0)), now0)
	if p := cache.Get("u1"); p != nil && (p.Container("c1") != nil || p.Sandbox("sb1") != nil) {
		t.Fatalf("containers of a deleted sandbox cached: %+v", p)
	}
}

// A container status names no sandbox; without the event's sandbox status
// the cached container supplies it, and a container nobody knows waits.
func TestCRIEventsApplyContainerWithoutSandboxStatus(t *testing.T) {
	s, cache := newApplySource()
	cache.UpsertSandbox("u1", "p", "ns", &Sandbox{ID: "sb1", State: SandboxReady})
	cache.UpsertContainer("u1", &Container{ID: "c1", SandboxID: "sb1", Name: "app", State: ContainerRunning})

	_, changed, _ := s.apply(event(evStopped, "c1", t0, nil, ctrStatus("c1", "u1", "app", ctrExited, 2)), now0)
	if c := cache.Get("u1").Container("c1"); !changed || c.State != ContainerExited || c.ExitCode != 2 || c.SandboxID != "sb1" {
		t.Fatalf("changed %v container %+v", changed, c)
	}
	_, changed, _ = s.apply(event(evCreated, "c9", t0, nil, ctrStatus("c9", "u1", "x", ctrCreated, 0)), now0)
	if changed || cache.Get("u1").Container("c9") != nil {
		t.Fatal("a container without a known sandbox was cached")
	}
}

// Objects a relist removed (their DELETED event lost) are pruned from the
// table and not brought back by a late event.
func TestCRIEventsPrune(t *testing.T) {
	s, cache := newApplySource()
	sb := sbStatus("sb1", "u1", sbReady)
	s.apply(event(evStarted, "c1", t0, sb, ctrStatus("c1", "u1", "app", ctrRunning, 0)), now0)
	cache.RemoveContainer("u1", "c1") // what a relist does
	s.objects.prune(cache, now0)
	if o := s.objects.byID["c1"]; o == nil || !o.deleted {
		t.Fatalf("c1 after prune: %+v", o)
	}
	if o := s.objects.byID["sb1"]; o == nil || o.deleted {
		t.Fatalf("sb1 after prune: %+v", o)
	}
	s.apply(event(evStopped, "c1", t0+1, sb, ctrStatus("c1", "u1", "app", ctrExited, 0)), now0)
	if cache.Get("u1").Container("c1") != nil {
		t.Fatal("a pruned container came back")
	}
}

// BenchmarkCRIEventsApply measures one container event of a pod with three
// containers, as containerd sends it, on a cache of 1,000 pods.
func BenchmarkCRIEventsApply(b *testing.B) {
	s, cache := newApplySource()
	for i := range 1000 {
		uid := types.UID(fmt.Sprintf("u%d", i))
		cache.UpsertSandbox(uid, "p", "ns", &Sandbox{ID: fmt.Sprintf("sb%d", i), State: SandboxReady})
	}
	sb := sbStatus("sb1", "u1", sbReady)
	ctrs := []*runtimeapi.ContainerStatus{
		ctrStatus("c1", "u1", "a", ctrRunning, 0), ctrStatus("c2", "u1", "b", ctrRunning, 0), ctrStatus("c3", "u1", "c", ctrRunning, 0),
	}
	ev := event(evStarted, "c1", t0, sb, ctrs...)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ev.CreatedAt = t0 + int64(i)
		s.apply(ev, now0)
	}
}
