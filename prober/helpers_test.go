package prober

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// fakeClock moves only when told; its timers fire on Advance.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{c: c, ch: make(chan time.Time, 1)}
	c.mu.Lock()
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	t.Reset(d)
	return t
}

// Advance moves the clock and fires the timers that fell due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for _, t := range c.timers {
		if t.active && !t.at.After(c.now) {
			t.fireLocked()
		}
	}
}

// armedAt reports whether a timer is set to fire at t.
func (c *fakeClock) armedAt(t time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, tm := range c.timers {
		if tm.active && tm.at.Equal(t) {
			return true
		}
	}
	return false
}

type fakeTimer struct {
	c      *fakeClock
	ch     chan time.Time
	at     time.Time
	active bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Reset(d time.Duration) {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.drainLocked()
	t.at, t.active = t.c.now.Add(d), true
	if d <= 0 {
		t.fireLocked()
	}
}

func (t *fakeTimer) Stop() {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.active = false
	t.drainLocked()
}

func (t *fakeTimer) fireLocked() {
	t.active = false
	select {
	case t.ch <- t.c.now:
	default:
	}
}

func (t *fakeTimer) drainLocked() {
	select {
	case <-t.ch:
	default:
	}
}

// fakeExec answers exec probes with reply, per container ID and command,
// and counts the calls.
type fakeExec struct {
	mu    sync.Mutex
	reply func(id string, cmd []string) (*runtimeapi.ExecSyncResponse, error)
	calls map[string]int // "id cmd[0]" -> runs
}

func newFakeExec() *fakeExec {
	return &fakeExec{calls: map[string]int{}}
}

func (f *fakeExec) ExecSync(_ context.Context, id string, cmd []string, _ time.Duration) (*runtimeapi.ExecSyncResponse, error) {
	f.mu.Lock()
	f.calls[id+" "+cmd[0]]++
	reply := f.reply
	f.mu.Unlock()
	if reply == nil {
		return &runtimeapi.ExecSyncResponse{}, nil
	}
	return reply(id, cmd)
}

func (f *fakeExec) count(id, cmd string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[id+" "+cmd]
}

func (f *fakeExec) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

// setExit makes command cmd exit with code (and output) from now on.
func (f *fakeExec) set(reply func(id string, cmd []string) (*runtimeapi.ExecSyncResponse, error)) {
	f.mu.Lock()
	f.reply = reply
	f.mu.Unlock()
}

// exits answers every command by its first word.
func exits(codes map[string]int32) func(string, []string) (*runtimeapi.ExecSyncResponse, error) {
	return func(_ string, cmd []string) (*runtimeapi.ExecSyncResponse, error) {
		return &runtimeapi.ExecSyncResponse{ExitCode: codes[cmd[0]], Stdout: []byte(cmd[0] + " said so")}, nil
	}
}

type event struct{ container, eventType, reason, message string }

type fakeRecorder struct {
	mu     sync.Mutex
	events []event
}

func (r *fakeRecorder) PodEvent(_ *v1.Pod, container, eventType, reason, message string) {
	r.mu.Lock()
	r.events = append(r.events, event{container, eventType, reason, message})
	r.mu.Unlock()
}

func (r *fakeRecorder) all() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event(nil), r.events...)
}

// notes counts Notify calls per UID.
type notes struct {
	mu sync.Mutex
	n  map[types.UID]int
}

func (n *notes) notify(uid types.UID) {
	n.mu.Lock()
	if n.n == nil {
		n.n = map[types.UID]int{}
	}
	n.n[uid]++
	n.mu.Unlock()
}

func (n *notes) count(uid types.UID) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.n[uid]
}

// harness is a running Manager on a fake clock, probes jittered by
// jitter (0 unless set).
type harness struct {
	t     testing.TB
	m     *Manager
	clock *fakeClock
	exec  *fakeExec
	rec   *fakeRecorder
	notes *notes
}

func newHarness(t testing.TB, workers int) *harness {
	t.Helper()
	h := &harness{t: t, clock: newFakeClock(), exec: newFakeExec(), rec: &fakeRecorder{}, notes: &notes{}}
	h.m = New(Config{
		Exec: h.exec, Notify: h.notes.notify, Recorder: h.rec, Workers: workers, Clock: h.clock,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	h.m.jitter = func(time.Duration) time.Duration { return 0 }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

// settle waits until every probe due by the fake clock has run and been
// counted.
func (h *harness) settle() {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		h.m.mu.Lock()
		idle := h.m.running == 0 && (h.m.due.Len() == 0 || h.m.wakeAt(h.m.due.first().due).After(h.clock.Now()))
		h.m.mu.Unlock()
		if idle {
			return
		}
		time.Sleep(200 * time.Microsecond)
	}
	h.t.Fatal("probes did not settle")
}

// step advances the clock by d and settles.
func (h *harness) step(d time.Duration) {
	h.t.Helper()
	h.clock.Advance(d)
	h.settle()
}

// execProbe is an exec probe of command cmd with period 10 s.
func execProbe(cmd string, mutate ...func(*v1.Probe)) *v1.Probe {
	p := &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{cmd}}}, PeriodSeconds: 10}
	for _, f := range mutate {
		f(p)
	}
	return p
}

// podWith is pod "web" (UID uid) with one container "app" carrying the
// given probes.
func podWith(uid string, liveness, readiness, startup *v1.Probe) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-" + uid, Namespace: "default", UID: types.UID(uid)},
		Spec: v1.PodSpec{
			RestartPolicy: v1.RestartPolicyAlways,
			Containers: []v1.Container{{
				Name: "app", LivenessProbe: liveness, ReadinessProbe: readiness, StartupProbe: startup,
			}},
		},
	}
}

func runningApp(id string, at time.Time) []Running {
	return []Running{{Name: "app", ID: id, StartedAt: at}}
}

func intstrName(name string) intstr.IntOrString { return intstr.FromString(name) }
