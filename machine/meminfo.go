package machine

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// ProcMeminfo is the kernel's memory summary.
const ProcMeminfo = "/proc/meminfo"

// Memory is the node's memory as the Summary API's node stats report it,
// in bytes.
type Memory struct {
	// Total is MemTotal, Free MemFree, Available MemAvailable.
	Total, Free, Available uint64
	// Usage is Total − Free: page cache included.
	Usage uint64
	// WorkingSet is Usage less the inactive file cache (Inactive(file)),
	// the memory the kernel cannot easily take back; never negative. It is
	// what cAdvisor reports for the root cgroup and what the kubelet's
	// eviction compares against.
	WorkingSet uint64
	// InactiveFile is Inactive(file).
	InactiveFile uint64
	// RSS is anonymous memory, AnonPages.
	RSS uint64
}

// ReadMemory reads meminfo (normally ProcMeminfo). MemTotal, MemFree,
// MemAvailable, Inactive(file) and AnonPages must all be there (kernels
// since 3.14 have them).
func ReadMemory(meminfo string) (Memory, error) {
	data, err := os.ReadFile(meminfo)
	if err != nil {
		return Memory{}, fmt.Errorf("read node memory: %w", err)
	}
	m, err := parseMeminfo(data)
	if err != nil {
		return Memory{}, fmt.Errorf("read node memory: %s: %w", meminfo, err)
	}
	return m, nil
}

func parseMeminfo(data []byte) (Memory, error) {
	var m Memory
	wanted := [...]struct {
		key   string
		field *uint64
	}{
		{"MemTotal", &m.Total},
		{"MemFree", &m.Free},
		{"MemAvailable", &m.Available},
		{"Inactive(file)", &m.InactiveFile},
		{"AnonPages", &m.RSS},
	}
	var found [len(wanted)]bool
	for line := range bytes.Lines(data) {
		key, rest, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		for i, w := range wanted {
			if string(key) != w.key {
				continue
			}
			// "MemTotal:       24684096 kB"
			f := bytes.Fields(rest)
			if len(f) != 2 || string(f[1]) != "kB" {
				return Memory{}, fmt.Errorf("line %q: want a number of kB", bytes.TrimSpace(line))
			}
			kb, err := strconv.ParseUint(string(f[0]), 10, 64)
			if err != nil {
				return Memory{}, fmt.Errorf("line %q: %w", bytes.TrimSpace(line), err)
			}
			*w.field, found[i] = kb*1024, true
		}
	}
	for i, w := range wanted {
		if !found[i] {
			return Memory{}, fmt.Errorf("no %s line", w.key)
		}
	}
	if m.Free > m.Total {
		return Memory{}, fmt.Errorf("MemFree %d above MemTotal %d", m.Free, m.Total)
	}
	m.Usage = m.Total - m.Free
	if m.Usage > m.InactiveFile {
		m.WorkingSet = m.Usage - m.InactiveFile
	}
	return m, nil
}
