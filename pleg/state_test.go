package pleg

import (
	"testing"
	"time"
)

var testEpoch = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func testCtr(id, sandboxID, name string, attempt uint32, state ContainerState) *Container {
	return &Container{ID: id, SandboxID: sandboxID, Name: name, Attempt: attempt, State: state,
		CreatedAt: testEpoch.Add(time.Duration(attempt) * time.Second)}
}

func TestStateStrings(t *testing.T) {
	f := func(got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
	f(SandboxReady.String(), "ready")
	f(SandboxNotReady.String(), "notready")
	f(SandboxState(0).String(), "unknown")
	f(ContainerCreated.String(), "created")
	f(ContainerRunning.String(), "running")
	f(ContainerExited.String(), "exited")
	f(ContainerUnknown.String(), "unknown")
}

func TestContainerNewerThan(t *testing.T) {
	f := func(newState ContainerState, newDetailed bool, oldState ContainerState, oldDetailed bool, want bool) {
		t.Helper()
		n := &Container{ID: "c", State: newState, Detailed: newDetailed}
		o := &Container{ID: "c", State: oldState, Detailed: oldDetailed}
		if got := n.newerThan(o); got != want {
			t.Errorf("%s (detailed %v) newer than %s (detailed %v) = %v, want %v",
				newState, newDetailed, oldState, oldDetailed, got, want)
		}
	}
	f(ContainerRunning, false, ContainerCreated, true, true)
	f(ContainerExited, false, ContainerRunning, true, true)
	f(ContainerExited, false, ContainerCreated, false, true)
	f(ContainerCreated, true, ContainerRunning, false, false)
	f(ContainerRunning, true, ContainerExited, false, false)
	f(ContainerUnknown, true, ContainerExited, false, false)
	f(ContainerUnknown, true, ContainerCreated, false, false)
	f(ContainerCreated, false, ContainerUnknown, true, true)
	f(ContainerExited, false, ContainerUnknown, false, true)
	f(ContainerExited, true, ContainerExited, false, true)
	f(ContainerExited, false, ContainerExited, true, false)
	f(ContainerExited, true, ContainerExited, true, false)
	f(ContainerRunning, false, ContainerRunning, false, false)
}

func TestPodLookups(t *testing.T) {
	// Newest first: app attempt 2 in sb1, sidecar, app 1 and app 0 in sb0.
	app2 := testCtr("app2", "sb1", "app", 2, ContainerRunning)
	side := testCtr("side0", "sb0", "sidecar", 0, ContainerExited)
	app1 := testCtr("app1", "sb0", "app", 1, ContainerExited)
	app0 := testCtr("app0", "sb0", "app", 0, ContainerExited)
	p := &Pod{
		Sandboxes:  []*Sandbox{{ID: "sb1", State: SandboxReady}, {ID: "sb0", State: SandboxNotReady}},
		Containers: []*Container{app2, side, app1, app0},
	}
	check := func(what string, got, want *Container) {
		t.Helper()
		if got != want {
			t.Errorf("%s: got %v, want %v", what, got, want)
		}
	}
	if cur := p.CurrentSandbox(); cur == nil || cur.ID != "sb1" {
		t.Errorf("current sandbox %v, want sb1", cur)
	}
	check("Latest(app)", p.Latest("app"), app2)
	check("Latest(sidecar)", p.Latest("sidecar"), side)
	check("Latest(none)", p.Latest("none"), nil)
	check("LatestIn(sb0, app)", p.LatestIn("sb0", "app"), app1)
	check("LatestIn(sb1, sidecar)", p.LatestIn("sb1", "sidecar"), nil)
	check("Previous(app2)", p.Previous(app2), app1)
	check("Previous(app1)", p.Previous(app1), app0)
	check("Previous(app0)", p.Previous(app0), nil)
	check("Previous(side)", p.Previous(side), nil)
	check("Previous(nil)", p.Previous(nil), nil)
	check("Previous of an unknown instance", p.Previous(testCtr("gone", "sb1", "app", 9, ContainerExited)), nil)
	if !p.Running() || p.Empty() {
		t.Errorf("Running %v Empty %v, want true false", p.Running(), p.Empty())
	}

	stopped := &Pod{Containers: []*Container{app1}}
	if stopped.Running() || stopped.Empty() || stopped.CurrentSandbox() != nil {
		t.Errorf("pod with one exited container and no sandbox: Running %v Empty %v Current %v",
			stopped.Running(), stopped.Empty(), stopped.CurrentSandbox())
	}
	if !(&Pod{UID: "u", Name: "n"}).Empty() {
		t.Error("a pod with only metadata is not empty")
	}

	var none *Pod
	if none.CurrentSandbox() != nil || none.Latest("app") != nil || none.LatestIn("sb", "app") != nil ||
		none.Previous(app1) != nil || none.Running() || !none.Empty() {
		t.Error("a nil *Pod must read as nothing in the runtime")
	}
}
