package machine

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestReadMemory(t *testing.T) {
	got, err := ReadMemory("testdata/proc-meminfo")
	if err != nil {
		t.Fatal(err)
	}
	const kB = 1024
	want := Memory{
		Total: 24684096 * kB, Free: 23166780 * kB, Available: 24106252 * kB,
		Usage: (24684096 - 23166780) * kB, WorkingSet: (24684096 - 23166780 - 190128) * kB,
		InactiveFile: 190128 * kB, RSS: 7688 * kB,
	}
	if got != want {
		t.Fatalf("ReadMemory:\n got %+v\nwant %+v", got, want)
	}
	f := func(content string, want Memory, wantErr string) {
		t.Helper()
		got, err := ReadMemory(writeFixture(t, "meminfo", content))
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Errorf("%q: %+v, %v; want an error with %q", content, got, err, wantErr)
			}
			return
		}
		if err != nil || got != want {
			t.Errorf("%q:\n got %+v, %v\nwant %+v", content, got, err, want)
		}
	}
	const base = "MemTotal: 100 kB\nMemFree: 40 kB\nMemAvailable: 70 kB\nAnonPages: 5 kB\n"
	f(base+"Inactive(file): 20 kB\n", Memory{
		Total: 100 * kB, Free: 40 * kB, Available: 70 * kB, Usage: 60 * kB, WorkingSet: 40 * kB,
		InactiveFile: 20 * kB, RSS: 5 * kB,
	}, "")
	// More inactive cache than usage (counters read at different moments).
	f(base+"Inactive(file): 90 kB\n", Memory{
		Total: 100 * kB, Free: 40 * kB, Available: 70 * kB, Usage: 60 * kB, InactiveFile: 90 * kB, RSS: 5 * kB,
	}, "")
	f(base, Memory{}, "no Inactive(file) line")
	f(base+"Inactive(file): 2x kB\n", Memory{}, "invalid syntax")
	f(base+"Inactive(file): 20\n", Memory{}, "want a number of kB")
	f("MemTotal: 10 kB\nMemFree: 40 kB\nMemAvailable: 70 kB\nAnonPages: 5 kB\nInactive(file): 1 kB\n", Memory{}, "above MemTotal")
}

// On this host MemTotal and MemFree agree with sysinfo(2), read around it.
func TestReadMemoryHost(t *testing.T) {
	var si1, si2 unix.Sysinfo_t
	unix.Sysinfo(&si1)
	m, err := ReadMemory(ProcMeminfo)
	unix.Sysinfo(&si2)
	if err != nil {
		t.Fatal(err)
	}
	unit := uint64(si1.Unit)
	if m.Total != si1.Totalram*unit {
		t.Errorf("Total %d, sysinfo says %d", m.Total, si1.Totalram*unit)
	}
	lo, hi := min(si1.Freeram, si2.Freeram)*unit, max(si1.Freeram, si2.Freeram)*unit
	if slack := uint64(64 << 20); m.Free+slack < lo || m.Free > hi+slack {
		t.Errorf("Free %d, sysinfo says %d..%d", m.Free, lo, hi)
	}
	if m.Available > m.Total || m.WorkingSet > m.Usage || m.RSS == 0 || m.Usage != m.Total-m.Free {
		t.Errorf("implausible: %+v", m)
	}
}

func TestReadPageFaults(t *testing.T) {
	faults, major, err := ReadPageFaults("testdata/proc-vmstat")
	if err != nil || faults != 149921091 || major != 42671 {
		t.Fatalf("ReadPageFaults = %d, %d, %v", faults, major, err)
	}
	if _, _, err := ReadPageFaults(writeFixture(t, "vmstat", "pgfault 1\n")); err == nil {
		t.Error("vmstat without pgmajfault: no error")
	}
	if _, _, err := ReadPageFaults(writeFixture(t, "vmstat", "pgfault 1\npgmajfault -2\n")); err == nil {
		t.Error("negative pgmajfault: no error")
	}
}

// Touching fresh anonymous pages faults each one in.
func TestReadPageFaultsHost(t *testing.T) {
	const size = 16 << 20
	before, _, err := ReadPageFaults(ProcVMStat)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	if err := unix.Madvise(mem, unix.MADV_NOHUGEPAGE); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < size; i += 4096 {
		mem[i] = 1
	}
	after, _, err := ReadPageFaults(ProcVMStat)
	if err != nil {
		t.Fatal(err)
	}
	if after-before < size/4096 {
		t.Errorf("%d page faults while touching %d fresh pages", after-before, size/4096)
	}
}
