package ebpf

import (
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Kind says what happened. The values are enum event_kind in bpf/events.c.
type Kind uint8

const (
	// KindExit: the main process (pid 1 of its pid namespace) of a watched
	// cgroup exited; its last thread is gone.
	KindExit Kind = 1
	// KindOOMVictim: the OOM killer chose a victim, in any cgroup.
	KindOOMVictim Kind = 2
	// KindEmptied: the last process left a watched cgroup.
	KindEmptied Kind = 3
)

func (k Kind) String() string {
	switch k {
	case KindExit:
		return "exit"
	case KindOOMVictim:
		return "oom_victim"
	case KindEmptied:
		return "emptied"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Event is one kernel event about a cgroup.
type Event struct {
	Kind     Kind
	CgroupID uint64 // inode of the cgroup2 directory, see CgroupID
	// Host pid of the exiting (or killed) thread and of its process; 0 for
	// KindEmptied. For KindExit the thread is the process's last one.
	PID, TGID uint32
	// ExitCode follows the CRI convention: the exit status, or 128+signal
	// when a signal killed the process (SIGKILL: 137). KindExit only.
	ExitCode int32
	// Signal that killed the process, 0 if it exited by itself. KindExit only.
	Signal int32
	// Wall-clock time of the kernel event.
	Time time.Time
}

// decode turns a ring buffer record into an Event. The record's layout is
// struct event, mirrored by the generated eventsEvent.
func decode(raw []byte) (Event, error) {
	if len(raw) < int(unsafe.Sizeof(eventsEvent{})) {
		return Event{}, fmt.Errorf("short ebpf event: %d bytes", len(raw))
	}
	e := (*eventsEvent)(unsafe.Pointer(&raw[0]))
	ev := Event{
		Kind:     Kind(e.Kind),
		CgroupID: e.CgroupId,
		PID:      e.Pid,
		TGID:     e.Tgid,
		Time:     bootToWall(e.BootNs),
	}
	if ev.Kind == KindExit {
		ev.ExitCode, ev.Signal = exitCode(e.WaitStatus)
	}
	return ev, nil
}

// exitCode splits a wait(2) status (code<<8 | core-dump bit | signal) into
// the CRI exit code and the killing signal.
func exitCode(status int32) (code, signal int32) {
	if sig := status & 0x7f; sig != 0 {
		return 128 + sig, sig
	}
	return (status >> 8) & 0xff, 0
}

// bootToWall converts a CLOCK_BOOTTIME reading of the kernel into wall-clock
// time. The offset is taken per event, not once: podline runs for months
// and the wall clock gets stepped; a clock read costs far less than the ring
// buffer wakeup that delivered the event. The kernel stamped the event
// before this read, so a stamp at or past it (a broken record; past int64
// it would wrap the subtraction) is taken as now, never as the future.
func bootToWall(bootNs uint64) time.Time {
	now := time.Now()
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return now
	}
	if bootNs >= uint64(ts.Nano()) {
		return now
	}
	return now.Add(-time.Duration(ts.Nano() - int64(bootNs)))
}
