package procstat

import (
	"errors"
	"os"
	"strconv"
	"strings"
)

// MachineBusySeconds is the CPU time every CPU of the machine has spent
// busy since boot: the first line of /proc/stat less idle and iowait.
// Guest time is already inside user and nice, so it is not added again.
func MachineBusySeconds() (float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return busySeconds(string(b))
}

func busySeconds(stat string) (float64, error) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, errors.New("/proc/stat: no cpu line")
	}
	var busy uint64
	// Fields 1-7 are user nice system idle iowait irq softirq: all but
	// idle and iowait count. Steal (8), the time the hypervisor gave to
	// others, is not this machine's work and is left out.
	for i, v := range f[1:8] {
		if i == 3 || i == 4 {
			continue
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, errors.New("/proc/stat: cpu line: " + err.Error())
		}
		busy += n
	}
	return float64(busy) / ClockTicks, nil
}
