package ebpf

import "github.com/VictoriaMetrics/metrics"

var (
	exitEvents      = metrics.NewCounter(`podline_ebpf_events_total{kind="exit"}`)
	oomVictimEvents = metrics.NewCounter(`podline_ebpf_events_total{kind="oom_victim"}`)
	emptiedEvents   = metrics.NewCounter(`podline_ebpf_events_total{kind="emptied"}`)
	// Events the kernel could not queue because the ring buffer was full.
	droppedEvents = metrics.NewCounter(`podline_ebpf_dropped_events_total`)
)

func countEvent(k Kind) {
	switch k {
	case KindExit:
		exitEvents.Inc()
	case KindOOMVictim:
		oomVictimEvents.Inc()
	case KindEmptied:
		emptiedEvents.Inc()
	}
}
