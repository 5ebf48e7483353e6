package ebpf

import (
	"encoding/binary"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestExitCode(t *testing.T) {
	f := func(status, wantCode, wantSignal int32) {
		t.Helper()
		code, sig := exitCode(status)
		if code != wantCode || sig != wantSignal {
			t.Errorf("exitCode(%#x) = %d, %d; want %d, %d", status, code, sig, wantCode, wantSignal)
		}
	}
	f(0, 0, 0)
	f(3<<8, 3, 0)
	f(255<<8, 255, 0)
	f(9, 137, 9)        // SIGKILL
	f(15, 143, 15)      // SIGTERM
	f(0x80|11, 139, 11) // SIGSEGV with a core dump
}

func TestKindString(t *testing.T) {
	f := func(k Kind, want string) {
		t.Helper()
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", uint8(k), got, want)
		}
	}
	f(KindExit, "exit")
	f(KindOOMVictim, "oom_victim")
	f(KindEmptied, "emptied")
	f(0, "Kind(0)")
}

// TestDecode builds a record byte by byte as struct event in bpf/events.c
// lays it out, stamped one second ago on the kernel's boot clock.
func TestDecode(t *testing.T) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 32)
	le := binary.LittleEndian
	le.PutUint64(raw[0:], 4242)                                 // cgroup_id
	le.PutUint64(raw[8:], uint64(ts.Nano()-int64(time.Second))) // boot_ns
	le.PutUint32(raw[16:], 100)                                 // pid
	le.PutUint32(raw[20:], 99)                                  // tgid
	le.PutUint32(raw[24:], 7<<8)                                // wait_status
	raw[28] = byte(KindExit)                                    // kind
	ev, err := decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Kind != KindExit || ev.CgroupID != 4242 || ev.PID != 100 || ev.TGID != 99 || ev.ExitCode != 7 || ev.Signal != 0 {
		t.Errorf("decoded %+v", ev)
	}
	if d := time.Since(ev.Time); d < time.Second || d > time.Second+100*time.Millisecond {
		t.Errorf("event stamped 1s ago on the boot clock decoded as %v ago", d)
	}
	if _, err := decode(raw[:31]); err == nil {
		t.Error("decoded a short record")
	}
}

// TestBootToWallNeverInTheFuture: a stamp the boot clock has not reached,
// or one past int64 (whose subtraction wrapped), reads as now, not as a
// date years ahead. Found by FuzzDecode.
func TestBootToWallNeverInTheFuture(t *testing.T) {
	for _, ns := range []uint64{1 << 62, 1<<63 + 5, ^uint64(0)} {
		before := time.Now()
		got := bootToWall(ns)
		if got.Before(before) || got.After(time.Now()) {
			t.Errorf("bootToWall(%d) = %v, want the moment it was called", ns, got)
		}
	}
}
