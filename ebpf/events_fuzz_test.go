package ebpf

import (
	"encoding/binary"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// FuzzDecode decodes any ring buffer record, at any alignment. A record
// shorter than struct event is refused; a whole one gives its fields as
// the C struct lays them out, an exit code as the CRI has them (the status,
// or 128+signal), and a time that is neither after the moment it was
// decoded nor before the boot: a kernel stamp the clock has not reached
// yet, or one past int64, is not an event from the future.
func FuzzDecode(f *testing.F) {
	rec := make([]byte, 32)
	le := binary.LittleEndian
	le.PutUint64(rec[0:], 4242)
	le.PutUint64(rec[8:], 1_000_000_000)
	le.PutUint32(rec[16:], 100)
	le.PutUint32(rec[20:], 99)
	le.PutUint32(rec[24:], 7<<8)
	rec[28] = byte(KindExit)
	f.Add(uint8(0), rec)
	f.Add(uint8(1), rec[:31])
	f.Fuzz(func(t *testing.T, offset uint8, data []byte) {
		// The record at an offset of its buffer: decode must not care
		// about alignment.
		buf := make([]byte, int(offset%8)+len(data))
		raw := buf[offset%8:]
		copy(raw, data)

		before := time.Now()
		ev, err := decode(raw)
		after := time.Now()
		if len(raw) < 32 {
			if err == nil {
				t.Fatalf("decoded a %d-byte record", len(raw))
			}
			return
		}
		if err != nil {
			t.Fatalf("decode of %d bytes: %v", len(raw), err)
		}
		if ev.CgroupID != le.Uint64(raw[0:]) || ev.PID != le.Uint32(raw[16:]) || ev.TGID != le.Uint32(raw[20:]) || ev.Kind != Kind(raw[28]) {
			t.Fatalf("decoded %+v from % x", ev, raw[:32])
		}
		if ev.Kind == KindExit {
			switch {
			case ev.Signal == 0 && (ev.ExitCode < 0 || ev.ExitCode > 255):
				t.Fatalf("exit code %d without a signal", ev.ExitCode)
			case ev.Signal != 0 && (ev.Signal < 1 || ev.Signal > 127 || ev.ExitCode != 128+ev.Signal):
				t.Fatalf("signal %d gives exit code %d", ev.Signal, ev.ExitCode)
			}
		} else if ev.ExitCode != 0 || ev.Signal != 0 {
			t.Fatalf("%s event with exit code %d signal %d", ev.Kind, ev.ExitCode, ev.Signal)
		}
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
			t.Fatal(err)
		}
		boot := before.Add(-time.Duration(ts.Nano())).Add(-time.Second)
		if ev.Time.After(after) || ev.Time.Before(boot) {
			t.Fatalf("boot_ns %d decoded as %v: outside [boot %v, now %v]", le.Uint64(raw[8:]), ev.Time, boot, after)
		}
	})
}
