package pleg

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// ctrObs is one observation of container "c1" of pod "u".
type ctrObs struct {
	state    ContainerState
	detailed bool
	exitCode int32
}

func TestCacheUpsertContainerMonotonic(t *testing.T) {
	f := func(name string, seq []ctrObs, wantChanged []bool, want ctrObs) {
		t.Helper()
		c := NewCache()
		var changed []bool
		for _, o := range seq {
			x := testCtr("c1", "sb1", "app", 0, o.state)
			x.Detailed, x.ExitCode = o.detailed, o.exitCode
			changed = append(changed, c.UpsertContainer("u", x))
		}
		got := c.Get("u").Containers
		if len(got) != 1 {
			t.Fatalf("%s: %d containers, want 1", name, len(got))
		}
		if g := (ctrObs{got[0].State, got[0].Detailed, got[0].ExitCode}); g != want || !slices.Equal(changed, wantChanged) {
			t.Errorf("%s: final %+v changed %v, want %+v %v", name, g, changed, want, wantChanged)
		}
	}
	created, running, exited := ctrObs{state: ContainerCreated}, ctrObs{state: ContainerRunning}, ctrObs{state: ContainerExited}
	detailed := func(o ctrObs, code int32) ctrObs { o.detailed, o.exitCode = true, code; return o }

	f("forward", []ctrObs{created, running, exited}, []bool{true, true, true}, exited)
	f("a stale running after the exit is ignored", []ctrObs{detailed(exited, 3), running, detailed(running, 0)},
		[]bool{true, false, false}, detailed(exited, 3))
	f("a stale created after running is ignored", []ctrObs{running, detailed(created, 0)}, []bool{true, false}, running)
	f("details for the same state replace a list entry, silently", []ctrObs{running, detailed(running, 0)},
		[]bool{true, false}, detailed(running, 0))
	f("the exit code for an exit podline recorded itself counts", []ctrObs{running, exited, detailed(exited, 137)},
		[]bool{true, true, true}, detailed(exited, 137))
	f("a list entry never replaces details", []ctrObs{detailed(exited, 1), exited}, []bool{true, false}, detailed(exited, 1))
	f("the first detailed exit wins", []ctrObs{detailed(exited, 1), detailed(exited, 2)}, []bool{true, false}, detailed(exited, 1))
	f("unknown is replaced by any state", []ctrObs{{state: ContainerUnknown}, created}, []bool{true, true}, created)
	f("unknown never replaces a known state", []ctrObs{running, {state: ContainerUnknown, detailed: true}}, []bool{true, false}, running)
	f("skipping created", []ctrObs{exited, created, running}, []bool{true, false, false}, exited)
}

func TestCacheUpsertSandbox(t *testing.T) {
	c := NewCache()
	sb := func(state SandboxState, ips ...string) *Sandbox {
		return &Sandbox{ID: "sb1", Attempt: 1, State: state, CreatedAt: testEpoch, IPs: ips}
	}
	step := func(what string, changed, want bool, wantState SandboxState, wantIPs []string) {
		t.Helper()
		p := c.Get("u")
		if changed != want || len(p.Sandboxes) != 1 || p.Sandboxes[0].State != wantState || !slices.Equal(p.Sandboxes[0].IPs, wantIPs) {
			t.Errorf("%s: changed %v, sandboxes %+v; want changed %v, state %s, IPs %v",
				what, changed, p.Sandboxes, want, wantState, wantIPs)
		}
	}
	step("new, from a status", c.UpsertSandbox("u", "web", "default", sb(SandboxReady, "10.0.0.5")), true, SandboxReady, []string{"10.0.0.5"})
	step("same state from a list entry: IPs kept", c.UpsertSandbox("u", "web", "default", sb(SandboxReady)), false, SandboxReady, []string{"10.0.0.5"})
	step("stopped", c.UpsertSandbox("u", "", "", sb(SandboxNotReady)), true, SandboxNotReady, []string{"10.0.0.5"})
	step("a stale ready read never revives it", c.UpsertSandbox("u", "", "", sb(SandboxReady, "10.0.0.9")), false, SandboxNotReady, []string{"10.0.0.5"})
	step("stopped again", c.UpsertSandbox("u", "", "", sb(SandboxNotReady)), false, SandboxNotReady, []string{"10.0.0.5"})
	if p := c.Get("u"); p.Name != "web" || p.Namespace != "default" || p.UID != "u" {
		t.Errorf("identity %q %q %q: an empty name must not clear it", p.UID, p.Name, p.Namespace)
	}
	c.UpsertSandbox("u", "web2", "prod", &Sandbox{ID: "sb2", State: SandboxReady, CreatedAt: testEpoch.Add(time.Minute)})
	if p := c.Get("u"); p.Name != "web2" || p.Namespace != "prod" {
		t.Errorf("identity %q %q, want the one last given", p.Name, p.Namespace)
	}
}

func TestCacheOrdering(t *testing.T) {
	c := NewCache()
	later := testEpoch.Add(time.Hour)
	cs := []*Container{
		{ID: "a0", Name: "a", Attempt: 0, CreatedAt: testEpoch},
		{ID: "b5", Name: "b", Attempt: 5, CreatedAt: later},
		{ID: "a1", Name: "a", Attempt: 1, CreatedAt: testEpoch.Add(time.Minute)},
		{ID: "zero", Name: "z", Attempt: 9},
		{ID: "b6", Name: "b", Attempt: 6, CreatedAt: later}, // same time: higher attempt first
		{ID: "a2", Name: "a", Attempt: 2, CreatedAt: testEpoch.Add(2 * time.Minute)},
	}
	for _, i := range []int{3, 0, 5, 1, 4, 2} {
		c.UpsertContainer("u", cs[i])
	}
	var ids []string
	for _, x := range c.Get("u").Containers {
		ids = append(ids, x.ID)
	}
	// By attempt, then by time: a count that no clock moves.
	if want := []string{"zero", "b6", "b5", "a2", "a1", "a0"}; !slices.Equal(ids, want) {
		t.Errorf("containers %v, want newest first %v", ids, want)
	}
	// The clock was set back an hour before a's next restart: its
	// creation stamp is the oldest, and it is still a's newest instance.
	c.UpsertContainer("u", &Container{ID: "a3", Name: "a", Attempt: 3, CreatedAt: testEpoch.Add(-time.Hour)})
	if got := c.Get("u").Latest("a"); got == nil || got.ID != "a3" {
		t.Errorf("latest a = %v, want a3, made after the clock was set back", got)
	}
	// Two instances of one attempt (made again after a create that never
	// started): the later one.
	c.UpsertContainer("u", &Container{ID: "a3bis", Name: "a", Attempt: 3, CreatedAt: testEpoch.Add(-time.Hour + time.Second)})
	if got := c.Get("u").Latest("a"); got == nil || got.ID != "a3bis" {
		t.Errorf("latest a = %v, want a3bis, the later of attempt 3", got)
	}

	for _, sb := range []*Sandbox{
		{ID: "s1", Attempt: 1, CreatedAt: testEpoch.Add(time.Minute)},
		{ID: "s3", Attempt: 3, CreatedAt: testEpoch.Add(time.Minute)},
		{ID: "s0", Attempt: 0, CreatedAt: testEpoch},
		{ID: "s4", Attempt: 4, CreatedAt: later},
	} {
		c.UpsertSandbox("u", "", "", sb)
	}
	ids = ids[:0]
	for _, sb := range c.Get("u").Sandboxes {
		ids = append(ids, sb.ID)
	}
	if want := []string{"s4", "s3", "s1", "s0"}; !slices.Equal(ids, want) {
		t.Errorf("sandboxes %v, want newest first %v", ids, want)
	}
	if cur := c.Get("u").CurrentSandbox(); cur.ID != "s4" {
		t.Errorf("current sandbox %s, want s4", cur.ID)
	}
	c.UpsertSandbox("u", "", "", &Sandbox{ID: "s5", Attempt: 5, CreatedAt: testEpoch.Add(-time.Hour)})
	if cur := c.Get("u").CurrentSandbox(); cur.ID != "s5" {
		t.Errorf("current sandbox %s, want s5, made after the clock was set back", cur.ID)
	}
}

func TestCacheRemove(t *testing.T) {
	c := NewCache()
	c.UpsertSandbox("u", "web", "default", &Sandbox{ID: "sb0", CreatedAt: testEpoch, State: SandboxNotReady})
	c.UpsertSandbox("u", "web", "default", &Sandbox{ID: "sb1", CreatedAt: testEpoch.Add(time.Minute), State: SandboxReady})
	c.UpsertContainer("u", testCtr("c0", "sb0", "app", 0, ContainerExited))
	c.UpsertContainer("u", testCtr("i0", "sb0", "init", 0, ContainerExited))
	c.UpsertContainer("u", testCtr("c1", "sb1", "app", 1, ContainerRunning))
	c.UpsertSandbox("v", "other", "default", &Sandbox{ID: "sbv", CreatedAt: testEpoch, State: SandboxReady})

	ids := func(p *Pod) (sbs, cs []string) {
		for _, sb := range p.Sandboxes {
			sbs = append(sbs, sb.ID)
		}
		for _, x := range p.Containers {
			cs = append(cs, x.ID)
		}
		return sbs, cs
	}
	if !c.RemoveSandbox("u", "sb0") {
		t.Error("RemoveSandbox(sb0) reported no change")
	}
	if sbs, cs := ids(c.Get("u")); !slices.Equal(sbs, []string{"sb1"}) || !slices.Equal(cs, []string{"c1"}) {
		t.Errorf("after removing sb0: sandboxes %v containers %v, want [sb1] [c1]", sbs, cs)
	}
	if c.RemoveSandbox("u", "sb0") || c.RemoveSandbox("nobody", "sb0") {
		t.Error("removing a sandbox twice, or of an unknown pod, reported a change")
	}
	if !c.RemoveContainer("u", "c1") || c.RemoveContainer("u", "c1") {
		t.Error("RemoveContainer must report a change exactly once")
	}
	if c.Len() != 2 {
		t.Errorf("Len %d, want 2", c.Len())
	}
	if !c.RemoveSandbox("u", "sb1") {
		t.Error("RemoveSandbox(sb1) reported no change")
	}
	if p := c.Get("u"); p != nil {
		t.Errorf("a pod with nothing left must be forgotten, got %+v", p)
	}
	if uids := c.UIDs(); c.Len() != 1 || !slices.Equal(uids, []types.UID{"v"}) {
		t.Errorf("Len %d UIDs %v, want 1 [v]", c.Len(), uids)
	}
}

func TestCacheSetPodMeta(t *testing.T) {
	c := NewCache()
	c.SetPodMeta("u", "web", "default")
	if c.Get("u") != nil || c.Len() != 0 {
		t.Fatal("SetPodMeta made an entry for a pod the runtime holds nothing of")
	}
	c.UpsertContainer("u", testCtr("c1", "sb1", "app", 0, ContainerRunning))
	before := c.Get("u")
	c.SetPodMeta("u", "web", "default")
	after := c.Get("u")
	if after.Name != "web" || after.Namespace != "default" {
		t.Errorf("meta %q %q, want web default", after.Name, after.Namespace)
	}
	if before.Name != "" {
		t.Errorf("the earlier snapshot changed: name %q", before.Name)
	}
	c.SetPodMeta("u", "web", "default")
	if c.Get("u") != after {
		t.Error("setting the same meta published a new snapshot")
	}
}

func TestCacheSnapshotsAreImmutable(t *testing.T) {
	c := NewCache()
	c.UpsertSandbox("u", "web", "default", &Sandbox{ID: "sb0", CreatedAt: testEpoch, State: SandboxReady, IPs: []string{"10.0.0.5"}})
	c.UpsertContainer("u", testCtr("c0", "sb0", "app", 0, ContainerRunning))
	c.UpsertContainer("u", testCtr("s0", "sb0", "side", 0, ContainerRunning))
	snap := c.Get("u")
	want := fmt.Sprintf("%+v", *snap)
	wantSandbox, wantCtr := *snap.Sandboxes[0], *snap.Containers[0]
	wantIDs := []string{snap.Containers[0].ID, snap.Containers[1].ID}

	c.UpsertContainer("u", testCtr("c0", "sb0", "app", 0, ContainerExited))
	c.UpsertContainer("u", testCtr("c1", "sb0", "app", 1, ContainerRunning))
	c.UpsertSandbox("u", "", "", &Sandbox{ID: "sb0", CreatedAt: testEpoch, State: SandboxNotReady})
	c.RemoveContainer("u", "s0")
	c.SetPodMeta("u", "renamed", "default")

	if got := fmt.Sprintf("%+v", *snap); got != want {
		t.Errorf("snapshot changed:\n got %s\nwant %s", got, want)
	}
	if !reflect.DeepEqual(*snap.Sandboxes[0], wantSandbox) || !reflect.DeepEqual(*snap.Containers[0], wantCtr) {
		t.Errorf("snapshot elements changed: %+v %+v", *snap.Sandboxes[0], *snap.Containers[0])
	}
	if ids := []string{snap.Containers[0].ID, snap.Containers[1].ID}; len(snap.Containers) != 2 || !slices.Equal(ids, wantIDs) {
		t.Errorf("snapshot containers %v, want %v", ids, wantIDs)
	}
	if p := c.Get("u"); p.Containers[0].ID != "c1" || p.Sandboxes[0].State != SandboxNotReady || len(p.Containers) != 2 {
		t.Errorf("the new snapshot misses the updates: %+v", p)
	}

	c.RemoveSandbox("u", "sb0")
	if len(snap.Containers) != 2 || snap.Containers[0] == nil || snap.Containers[1] == nil {
		t.Errorf("RemoveSandbox cleared entries of an older snapshot: %v", snap.Containers)
	}
}

// TestCacheConcurrentWriters replays each container's lifecycle from many
// writers in random order, as a relist and the stages race in podline; the
// merge must end in the furthest state whatever the order.
func TestCacheConcurrentWriters(t *testing.T) {
	c := NewCache()
	const pods, perPod, writers = 64, 4, 8
	type event struct {
		uid types.UID
		c   *Container
	}
	var events []event
	for p := range pods {
		uid := types.UID(fmt.Sprintf("pod-%d", p))
		for i := range perPod {
			id := fmt.Sprintf("%s-c%d", uid, i)
			for _, st := range []ContainerState{ContainerCreated, ContainerRunning, ContainerExited} {
				for _, det := range []bool{false, true} {
					x := testCtr(id, "sb", fmt.Sprintf("c%d", i), uint32(i), st)
					x.Detailed = det
					if st == ContainerExited && det {
						x.ExitCode = int32(i + 1)
					}
					events = append(events, event{uid, x})
				}
			}
		}
	}
	rand.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })

	var wg sync.WaitGroup
	stop := make(chan struct{})
	var readers sync.WaitGroup
	readers.Add(1)
	go func() { // readers walk snapshots while writers publish new ones
		defer readers.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, uid := range c.UIDs() {
				if p := c.Get(uid); p != nil {
					for _, x := range p.Containers {
						_ = x.State
					}
				}
			}
		}
	}()
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(events); i += writers {
				c.UpsertContainer(events[i].uid, events[i].c)
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()

	if c.Len() != pods {
		t.Fatalf("Len %d, want %d", c.Len(), pods)
	}
	for p := range pods {
		pod := c.Get(types.UID(fmt.Sprintf("pod-%d", p)))
		if len(pod.Containers) != perPod {
			t.Fatalf("pod %d: %d containers, want %d", p, len(pod.Containers), perPod)
		}
		for _, x := range pod.Containers {
			if x.State != ContainerExited || !x.Detailed || x.ExitCode != int32(x.Attempt+1) {
				t.Errorf("pod %d container %s: %s detailed %v exit %d, want the detailed exit",
					p, x.ID, x.State, x.Detailed, x.ExitCode)
			}
		}
		for i := 1; i < len(pod.Containers); i++ {
			if pod.Containers[i-1].CreatedAt.Before(pod.Containers[i].CreatedAt) {
				t.Errorf("pod %d: containers not newest first", p)
			}
		}
	}
}
