package machine

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// ProcVMStat is the kernel's virtual memory counters.
const ProcVMStat = "/proc/vmstat"

// ReadPageFaults returns the node's cumulative page faults and major page
// faults from vmstat (normally ProcVMStat): pgfault and pgmajfault.
func ReadPageFaults(vmstat string) (faults, major uint64, err error) {
	data, err := os.ReadFile(vmstat)
	if err != nil {
		return 0, 0, fmt.Errorf("read node page faults: %w", err)
	}
	var found int
	for line := range bytes.Lines(data) {
		key, val, ok := bytes.Cut(bytes.TrimSpace(line), []byte{' '})
		if !ok {
			continue
		}
		var dst *uint64
		switch string(key) {
		case "pgfault":
			dst = &faults
		case "pgmajfault":
			dst = &major
		default:
			continue
		}
		if *dst, err = strconv.ParseUint(string(val), 10, 64); err != nil {
			return 0, 0, fmt.Errorf("read node page faults: %s: %w", vmstat, err)
		}
		found++
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("read node page faults: %s: no pgfault and pgmajfault lines", vmstat)
	}
	return faults, major, nil
}
