package cgroupfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestParseKeyedValue(t *testing.T) {
	f := func(data, key string, want uint64, wantFound, wantErr bool) {
		t.Helper()
		got, found, err := parseKeyedValue([]byte(data), key)
		if (err != nil) != wantErr || found != wantFound || got != want {
			t.Errorf("parseKeyedValue(%q, %q) = %d, %v, %v; want %d, %v, err %v", data, key, got, found, err, want, wantFound, wantErr)
		}
	}
	f("populated 1\nfrozen 0\n", "populated", 1, true, false)
	f("populated 0\nfrozen 1\n", "populated", 0, true, false)
	f("populated 0\nfrozen 1\n", "frozen", 1, true, false)
	f("oom_kill_disable 0\nunder_oom 0\noom_kill 7\n", "oom_kill", 7, true, false)
	f("low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n", "oom_kill", 2, true, false)
	f("oom_kill_disable 0\nunder_oom 0\n", "oom_kill", 0, false, false)
	f("oom_kill x\n", "oom_kill", 0, false, true)
	f("", "populated", 0, false, false)
}

func TestParseNotifyMounts(t *testing.T) {
	f := func(name, text string, want notifyMounts) {
		t.Helper()
		if got := notifyMountsOf(parseMounts([]byte(text))); got != want {
			t.Errorf("%s: got %+v; want %+v", name, got, want)
		}
	}
	data, err := os.ReadFile(filepath.Join("testdata", "mountinfo-hybrid"))
	if err != nil {
		t.Fatal(err)
	}
	f("hybrid v1 host", string(data), notifyMounts{cgroup2: "/sys/fs/cgroup/unified", memoryV1: "/sys/fs/cgroup/memory"})
	f("unified host", "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n",
		notifyMounts{cgroup2: "/sys/fs/cgroup"})
	f("combined v1 controllers", "32 31 0:29 / /sys/fs/cgroup/memory,blkio rw - cgroup cgroup rw,blkio,memory\n",
		notifyMounts{memoryV1: "/sys/fs/cgroup/memory,blkio"})
	f("memory named only in the path", "32 31 0:29 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,cpu\n", notifyMounts{})
	f("no cgroups", "22 27 0:21 / /proc rw,relatime - proc proc rw\n", notifyMounts{})
}

// TestNotifyEmptiedOnExit: the last process leaving, however it ends,
// gives one Emptied; the latency is from the moment the test lets the
// process end.
func TestNotifyEmptiedOnExit(t *testing.T) {
	n := newTestNotifier(t)
	r := runNotifier(t, n)
	f := func(name string, script string, end func(*testing.T, *os.File, *os.Process), wantStatus string) {
		t.Run(name, func(t *testing.T) {
			cg := makeTestCgroup(t, n)
			cmd, stdin := cg.start(t, "sh", "-c", script)
			id, err := n.Watch(cg.rel)
			if err != nil {
				t.Fatal(err)
			}
			defer n.Unwatch(id)
			r.expectNone(t, 30*time.Millisecond)

			start := time.Now()
			end(t, stdin, cmd.Process)
			nt := r.expect(t, Emptied, id, 2*time.Second)
			t.Logf("exit → Emptied: seen after %v, delivered after %v", nt.Time.Sub(start), time.Since(start))
			cmd.Wait()
			if got := cmd.ProcessState.String(); got != wantStatus {
				t.Errorf("process ended with %q, want %q", got, wantStatus)
			}
			r.expectNone(t, 30*time.Millisecond)
		})
	}
	release := func(t *testing.T, stdin *os.File, _ *os.Process) {
		if _, err := stdin.WriteString("go\n"); err != nil {
			t.Fatal(err)
		}
	}
	f("exit 0", "read x; exit 0", release, "exit status 0")
	f("exit 3", "read x; exit 3", release, "exit status 3")
	f("sigkill", "read x", func(t *testing.T, _ *os.File, p *os.Process) {
		if err := p.Kill(); err != nil {
			t.Fatal(err)
		}
	}, "signal: killed")
}

// TestNotifyEmptiedAtWatch: a container that exited before podline
// watched it is reported at once, even before Run starts.
func TestNotifyEmptiedAtWatch(t *testing.T) {
	n := newTestNotifier(t)
	cg := makeTestCgroup(t, n)
	before := time.Now()
	id, err := n.Watch(cg.rel)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := n.Watch(cg.rel); err != nil || again != id {
		t.Errorf("second Watch = %d, %v; want %d", again, err, id)
	}
	r := runNotifier(t, n)
	nt := r.expect(t, Emptied, id, time.Second)
	if nt.Time.Before(before) || nt.Time.Sub(before) > 100*time.Millisecond {
		t.Errorf("Emptied seen at %v, Watch started at %v", nt.Time, before)
	}
	r.expectNone(t, 50*time.Millisecond)
}

func TestNotifyWaitsForLastProcess(t *testing.T) {
	n := newTestNotifier(t)
	r := runNotifier(t, n)
	cg := makeTestCgroup(t, n)
	first, _ := cg.start(t, "sh", "-c", "read x")
	second, _ := cg.start(t, "sh", "-c", "read x")
	id, err := n.Watch(cg.rel)
	if err != nil {
		t.Fatal(err)
	}
	first.Process.Kill()
	first.Wait()
	r.expectNone(t, 100*time.Millisecond)
	second.Process.Kill()
	r.expect(t, Emptied, id, 2*time.Second)
}

// TestNotifyFreezeIsNotExit: cgroup.events also changes on freeze; only
// populated 1 → 0 is an Emptied.
func TestNotifyFreezeIsNotExit(t *testing.T) {
	n := newTestNotifier(t)
	r := runNotifier(t, n)
	cg := makeTestCgroup(t, n)
	cmd, _ := cg.start(t, "sh", "-c", "read x")
	id, err := n.Watch(cg.rel)
	if err != nil {
		t.Fatal(err)
	}
	freeze := func(v string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(cg.v2, "cgroup.freeze"), []byte(v), 0); err != nil {
			t.Fatal(err)
		}
	}
	freeze("1")
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(time.Millisecond) {
		if v, _, _ := readFlat(filepath.Join(cg.v2, "cgroup.events"), "frozen"); v == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("cgroup did not freeze")
		}
	}
	freeze("0")
	r.expectNone(t, 100*time.Millisecond)
	cmd.Process.Kill()
	r.expect(t, Emptied, id, 2*time.Second)
}

func TestNotifyWatchErrors(t *testing.T) {
	n := newTestNotifier(t)
	if _, err := n.Watch("/" + notifyTestParent + "/no-such-cgroup"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing cgroup: err %v, want fs.ErrNotExist", err)
	}
	if n.memoryV1 != "" {
		// A cgroup2 directory without its memory counterpart.
		cg := makeTestCgroup(t, n)
		if err := os.Remove(cg.mem); err != nil {
			t.Fatal(err)
		}
		before := inotifyWatches(t)
		if _, err := n.Watch(cg.rel); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("missing memory cgroup: err %v, want fs.ErrNotExist", err)
		}
		if got := inotifyWatches(t); got != before {
			t.Errorf("failed Watch left inotify watches: %d, was %d", got, before)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx, func(Notification) {}) }()
	time.Sleep(10 * time.Millisecond)
	if err := n.Run(ctx, func(Notification) {}); err == nil {
		t.Error("second concurrent Run succeeded")
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after Close")
	}
	cg := makeTestCgroup(t, n)
	if _, err := n.Watch(cg.rel); !errors.Is(err, ErrNotifierClosed) {
		t.Errorf("Watch after Close: %v, want ErrNotifierClosed", err)
	}
}

func readFlat(file, key string) (uint64, bool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, false, err
	}
	return parseKeyedValue(data, key)
}

func TestNotifyKindString(t *testing.T) {
	got := []string{Emptied.String(), OOMKill.String(), NotifyKind(9).String()}
	if want := []string{"emptied", "oom_kill", "NotifyKind(9)"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestNotifyRunAgain: a Run that ended leaves the Notifier usable; the
// next Run serves inotify and the OOM epoll again.
func TestNotifyRunAgain(t *testing.T) {
	n := newTestNotifier(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx, func(Notification) {}) }()
	time.Sleep(10 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("first Run: %v", err)
	}

	r := runNotifier(t, n)
	cg := makeTestCgroup(t, n)
	cmd, _ := cg.start(t, "sh", "-c", "read x")
	id, err := n.Watch(cg.rel)
	if err != nil {
		t.Fatal(err)
	}
	fds := openFDs(t)
	cmd.Process.Kill()
	r.expect(t, Emptied, id, 2*time.Second)
	cmd.Wait()
	cg.remove(t)
	if n.memoryV1 == "" {
		return
	}
	// Removal fires the eventfd: the epoll goroutine must see it and let go.
	for deadline := time.Now().Add(2 * time.Second); openFDs(t) != fds-1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("eventfd of the removed cgroup not released: %d fds, want %d", openFDs(t), fds-1)
		}
	}
}
