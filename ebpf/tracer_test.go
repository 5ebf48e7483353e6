package ebpf

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestUnwatch(t *testing.T) {
	tr := loadTracer(t, cgroup2Hierarchy)
	c := collect(t, tr)
	cg, id := watchNew(t, tr)
	anyOf := func(e Event) bool { return e.CgroupID == id }

	start(t, cg, true, "/bin/true").wait(t)
	c.expect(t, "exit while watched", exitIn(id))
	c.expect(t, "emptied while watched", emptied(id))

	for range 2 { // unwatching twice is fine
		if err := tr.Unwatch(id); err != nil {
			t.Fatal(err)
		}
	}
	start(t, cg, true, "/bin/true").wait(t)
	c.none(t, "an event after Unwatch", 300*time.Millisecond, anyOf)

	if err := tr.Watch(id); err != nil {
		t.Fatal(err)
	}
	start(t, cg, true, "/bin/true").wait(t)
	c.expect(t, "exit after watching again", exitIn(id))
}

// TestRunStops: Run returns promptly when its ctx ends and when the tracer
// closes, both while blocked with nothing to read, and a new Run after a
// cancelled one still gets events.
func TestRunStops(t *testing.T) {
	tr := loadTracer(t, cgroup2Hierarchy)
	cg, id := watchNew(t, tr)
	returns := func(what string, done <-chan error, want error) {
		t.Helper()
		select {
		case err := <-done:
			if !errors.Is(err, want) {
				t.Fatalf("%s: Run returned %v, want %v", what, err, want)
			}
		case <-time.After(time.Second):
			t.Fatalf("%s: Run still blocked after 1s", what)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tr.Run(ctx, func(Event) {}) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	returns("ctx cancelled", done, context.Canceled)

	events := make(chan Event, 16)
	go func() { done <- tr.Run(context.Background(), func(e Event) { events <- e }) }()
	time.Sleep(50 * time.Millisecond)
	if err := tr.Run(context.Background(), func(Event) {}); err == nil {
		t.Error("a second concurrent Run was accepted")
	}
	start(t, cg, true, "/bin/true").wait(t)
	select {
	case e := <-events:
		if e.Kind != KindExit || e.CgroupID != id {
			t.Errorf("got %+v, want the exit in %d", e, id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event after Run was restarted")
	}

	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	returns("Close", done, nil)
	if err := tr.Run(context.Background(), func(Event) {}); err != nil {
		t.Errorf("Run after Close: %v", err)
	}
}

// TestRunIdle: a Run with nothing to read sleeps in the kernel.
func TestRunIdle(t *testing.T) {
	tr := loadTracer(t, cgroup2Hierarchy)
	collect(t, tr)
	time.Sleep(50 * time.Millisecond)
	cpu := func() time.Duration {
		var ru unix.Rusage
		if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	before := cpu()
	time.Sleep(300 * time.Millisecond)
	if used := cpu() - before; used > 10*time.Millisecond {
		t.Errorf("idle Run used %v of CPU in 300ms", used)
	} else {
		t.Logf("idle for 300ms: %v of CPU", used)
	}
}

// TestDropped: with nobody reading, the ring buffer fills; every event is
// then either delivered or counted as dropped, none lost silently.
func TestDropped(t *testing.T) {
	tr := loadTracer(t, cgroup2Hierarchy)
	a, idA := watchNew(t, tr)
	b, idB := watchNew(t, tr)
	p := start(t, a, false, "/bin/sleep", "60")

	// Each move empties the cgroup it leaves: one event per move, more
	// than the 256 KiB ring buffer holds.
	const moves = 10000
	procs := make([]*os.File, 2)
	for i, dir := range []string{b, a} {
		f, err := os.OpenFile(filepath.Join(dir, "cgroup.procs"), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		procs[i] = f
	}
	pid := []byte(strconv.Itoa(int(p.pid())))
	for i := range moves {
		if _, err := procs[i%2].Write(pid); err != nil {
			t.Fatalf("move %d: %v", i, err)
		}
	}

	dropped := tr.Dropped()
	if dropped == 0 {
		t.Fatalf("no drops after %d events into a %d-byte ring buffer", moves, tr.rd.BufferSize())
	}
	metricBefore := droppedEvents.Get()
	select {
	case <-tr.Lost():
		t.Fatal("Lost signalled before Run saw the drops")
	default:
	}
	c := collect(t, tr)
	for range moves - int(dropped) {
		c.expect(t, "a queued emptied event", func(e Event) bool {
			return e.Kind == KindEmptied && (e.CgroupID == idA || e.CgroupID == idB)
		})
	}
	c.none(t, "more events than were not dropped", 200*time.Millisecond, func(e Event) bool { return e.Kind == KindEmptied })
	if got := droppedEvents.Get() - metricBefore; got != dropped {
		t.Errorf("drop metric grew by %d, want %d", got, dropped)
	}
	select {
	case <-tr.Lost():
	default:
		t.Error("drops were counted but Lost did not signal: nothing would relist")
	}
	t.Logf("%d events: %d delivered, %d dropped", moves, moves-int(dropped), dropped)
}

// TestLoadWithoutPrivileges: Load says which capabilities are missing. The
// capabilities are dropped on one locked OS thread only, which then dies.
func TestLoadWithoutPrivileges(t *testing.T) {
	requireKernel(t)
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		for _, c := range []int{unix.CAP_BPF, unix.CAP_PERFMON, unix.CAP_SYS_ADMIN} {
			data[c/32].Effective &^= 1 << (c % 32)
		}
		if err := unix.Capset(&hdr, &data[0]); err != nil {
			errc <- err
			return
		}
		tr, err := Load(nil)
		if err == nil {
			tr.Close()
		}
		errc <- err
	}()
	err := <-errc
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("Load without CAP_BPF: %v, want ErrUnsupported", err)
	}
	if !strings.Contains(err.Error(), "CAP_BPF") {
		t.Errorf("the error does not name the missing capability: %v", err)
	}
	t.Log(err)
}
