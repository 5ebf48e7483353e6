package machine

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// ProcStat is the kernel's CPU time accounting.
const ProcStat = "/proc/stat"

// userHZ is the unit of /proc/stat: USER_HZ, 100 on every architecture
// podline runs on, whatever the kernel's own HZ.
const userHZ = 100

// ReadCPUUsage returns the node's cumulative busy CPU time in nanoseconds
// from the first ("cpu") line of procStat (normally ProcStat): user, nice,
// system, irq, softirq and steal summed over all CPUs. Idle and iowait are
// not busy; guest and guest_nice are left out because user and nice
// already include them.
func ReadCPUUsage(procStat string) (nanos uint64, err error) {
	data, err := os.ReadFile(procStat)
	if err != nil {
		return 0, fmt.Errorf("read node cpu usage: %w", err)
	}
	nanos, err = parseCPUUsage(data)
	if err != nil {
		return 0, fmt.Errorf("read node cpu usage: %s: %w", procStat, err)
	}
	return nanos, nil
}

func parseCPUUsage(data []byte) (uint64, error) {
	line, _, _ := bytes.Cut(data, []byte{'\n'})
	fields := bytes.Fields(line)
	if len(fields) == 0 || string(fields[0]) != "cpu" {
		return 0, fmt.Errorf("first line %q is not the cpu total", line)
	}
	// user nice system idle iowait irq softirq steal guest guest_nice;
	// kernels since 2.6.11 have steal.
	const idle, iowait, steal = 3, 4, 7
	vals := fields[1:]
	if len(vals) <= steal {
		return 0, fmt.Errorf("cpu line %q: %d fields, want at least %d", line, len(vals), steal+1)
	}
	var ticks uint64
	for i, f := range vals[:steal+1] {
		v, err := strconv.ParseUint(string(f), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu line %q: %w", line, err)
		}
		if i != idle && i != iowait {
			ticks += v
		}
	}
	return ticks * (1e9 / userHZ), nil
}
