package main

import "fmt"

// memStats is what the scale scenario keeps of one scrape of podline's
// /metrics: the Go runtime's memory and goroutines, and podline's image
// pull counters.
type memStats struct {
	heapAlloc, heapInuse, sys float64 // bytes
	goroutines                int
	// pulls and pullsShared are -1 when the agent does not expose them.
	pulls, pullsShared float64
}

// memStatsOf reads the Go runtime's gauges from a scrape; they are what
// the scenario exists to report, so their absence is an error.
func memStatsOf(m *scrape) (memStats, error) {
	out := memStats{goroutines: -1, pulls: -1, pullsShared: -1}
	// In a fixed order, so that a scrape lacking several names the first.
	for _, g := range []struct {
		name string
		dst  *float64
	}{
		{"go_memstats_heap_alloc_bytes", &out.heapAlloc},
		{"go_memstats_heap_inuse_bytes", &out.heapInuse},
		{"go_memstats_sys_bytes", &out.sys},
	} {
		v, ok := m.samples[g.name]
		if !ok {
			return out, fmt.Errorf("agent /metrics has no %s", g.name)
		}
		*g.dst = v
	}
	if v, ok := m.samples["go_goroutines"]; ok {
		out.goroutines = int(v)
	}
	if v, ok := m.samples[`podline_image_pulls_total{result="success"}`]; ok {
		out.pulls = v
	}
	if v, ok := m.samples["podline_image_pulls_shared_total"]; ok {
		out.pullsShared = v
	}
	return out, nil
}
