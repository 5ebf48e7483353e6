package cgroupfs

import "time"

// v1MemoryUnlimited is where a v1 memory limit stops meaning anything: "no
// limit" reads as LONG_MAX rounded down to a page (9223372036854771712
// with 4 KiB pages), and no machine has 4 EiB.
const v1MemoryUnlimited = 1 << 62

// readCPUV1 reads cpuacct.usage, the cgroup's CPU time in nanoseconds.
func readCPUV1(b *statsBuf, s *Stats) (bool, error) {
	v, err := b.readUint("cpuacct.usage")
	if err != nil {
		return false, b.unlessAbsent(err)
	}
	s.CPUUsageNanos, s.Time = v, time.Now()
	return true, nil
}

// readMemoryV1 reads memory.usage_in_bytes, memory.limit_in_bytes and the
// hierarchical (total_*) counters of memory.stat, so a pod cgroup counts
// its containers.
func readMemoryV1(b *statsBuf, s *Stats) (bool, error) {
	usage, err := b.readUint("memory.usage_in_bytes")
	if err != nil {
		return false, b.unlessAbsent(err)
	}
	limit, err := b.readUint("memory.limit_in_bytes")
	if err != nil {
		return false, err
	}
	data, err := b.read("memory.stat")
	if err != nil {
		return false, err
	}
	var m memStat
	if !m.parseV1(data) {
		return false, b.malformed(data)
	}
	if limit >= v1MemoryUnlimited {
		limit = 0
	}
	m.store(s, usage, limit)
	return true, nil
}

// memStat holds the memory.stat counters Stats needs.
type memStat struct {
	rss, cache, inactiveFile, pgfault, pgmajfault uint64
	found                                         uint8 // bit per counter
}

const memStatAll = 1<<5 - 1

// parseV1 reads the total_* lines; false on a malformed file or one
// without all of them.
func (m *memStat) parseV1(data []byte) bool {
	ok := eachKeyed(data, func(k []byte, v uint64) bool {
		switch string(k) {
		case "total_rss":
			m.set(0, &m.rss, v)
		case "total_cache":
			m.set(1, &m.cache, v)
		case "total_inactive_file":
			m.set(2, &m.inactiveFile, v)
		case "total_pgfault":
			m.set(3, &m.pgfault, v)
		case "total_pgmajfault":
			m.set(4, &m.pgmajfault, v)
		}
		return m.found != memStatAll
	})
	return ok && m.found == memStatAll
}

func (m *memStat) set(bit uint, field *uint64, v uint64) {
	*field = v
	m.found |= 1 << bit
}

// store fills the memory fields of s.
func (m *memStat) store(s *Stats, usage, limit uint64) {
	s.MemoryUsage = usage
	s.MemoryWorkingSet = 0
	if usage > m.inactiveFile {
		s.MemoryWorkingSet = usage - m.inactiveFile
	}
	s.MemoryRSS = m.rss
	s.MemoryCache = m.cache
	s.PageFaults = m.pgfault
	s.MajorPageFaults = m.pgmajfault
	s.MemoryLimit = limit
}
