package cgroupfs

import "time"

// readCPUV2 reads usage_usec from cpu.stat. cgroup2 keeps cpu.stat in
// every cgroup, cpu controller enabled or not.
func readCPUV2(b *statsBuf, s *Stats) (bool, error) {
	data, err := b.read("cpu.stat")
	if err != nil {
		return false, b.unlessAbsent(err)
	}
	at := time.Now()
	var usec uint64
	found := false
	ok := eachKeyed(data, func(k []byte, v uint64) bool {
		if string(k) == "usage_usec" {
			usec, found = v, true
			return false
		}
		return true
	})
	if !ok || !found {
		return false, b.malformed(data)
	}
	s.CPUUsageNanos, s.Time = usec*1000, at
	return true, nil
}

// readMemoryV2 reads memory.current, memory.max and memory.stat. A cgroup
// whose parent does not enable the memory controller has none of them.
func readMemoryV2(b *statsBuf, s *Stats) (bool, error) {
	usage, err := b.readUint("memory.current")
	if err != nil {
		return false, b.unlessAbsent(err)
	}
	data, err := b.read("memory.max")
	if err != nil {
		return false, err
	}
	var limit uint64
	if trimmed := trimNewline(data); string(trimmed) != "max" {
		var ok bool
		if limit, ok = parseUintBytes(trimmed); !ok {
			return false, b.malformed(data)
		}
	}
	if data, err = b.read("memory.stat"); err != nil {
		return false, err
	}
	var m memStat
	if !m.parseV2(data) {
		return false, b.malformed(data)
	}
	m.store(s, usage, limit)
	return true, nil
}

// parseV2 reads the cgroup2 memory.stat counters (hierarchical already);
// false on a malformed file or one without all of them.
func (m *memStat) parseV2(data []byte) bool {
	ok := eachKeyed(data, func(k []byte, v uint64) bool {
		switch string(k) {
		case "anon":
			m.set(0, &m.rss, v)
		case "file":
			m.set(1, &m.cache, v)
		case "inactive_file":
			m.set(2, &m.inactiveFile, v)
		case "pgfault":
			m.set(3, &m.pgfault, v)
		case "pgmajfault":
			m.set(4, &m.pgmajfault, v)
		}
		return m.found != memStatAll
	})
	return ok && m.found == memStatAll
}
