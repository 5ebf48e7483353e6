package node

import (
	"sync/atomic"

	"github.com/VictoriaMetrics/metrics"
	v1 "k8s.io/api/core/v1"
)

// published holds what Publish last set, for the gauges below.
var published atomic.Pointer[[2]v1.ResourceList]

func resourceGauge(which int, name v1.ResourceName) func() float64 {
	return func() float64 {
		p := published.Load()
		if p == nil {
			return 0
		}
		q := p[which][name]
		if name == v1.ResourceCPU {
			return float64(q.MilliValue()) / 1000
		}
		return float64(q.Value())
	}
}

var (
	_ = metrics.NewGauge(`podline_node_capacity{resource="cpu"}`, resourceGauge(0, v1.ResourceCPU))
	_ = metrics.NewGauge(`podline_node_capacity{resource="memory"}`, resourceGauge(0, v1.ResourceMemory))
	_ = metrics.NewGauge(`podline_node_capacity{resource="pods"}`, resourceGauge(0, v1.ResourcePods))
	_ = metrics.NewGauge(`podline_node_capacity{resource="ephemeral-storage"}`, resourceGauge(0, v1.ResourceEphemeralStorage))
	_ = metrics.NewGauge(`podline_node_allocatable{resource="cpu"}`, resourceGauge(1, v1.ResourceCPU))
	_ = metrics.NewGauge(`podline_node_allocatable{resource="memory"}`, resourceGauge(1, v1.ResourceMemory))
	_ = metrics.NewGauge(`podline_node_allocatable{resource="pods"}`, resourceGauge(1, v1.ResourcePods))
	_ = metrics.NewGauge(`podline_node_allocatable{resource="ephemeral-storage"}`, resourceGauge(1, v1.ResourceEphemeralStorage))
)

// Publish reports the node's capacity and allocatable on /metrics.
func Publish(capacity, allocatable v1.ResourceList) {
	published.Store(&[2]v1.ResourceList{capacity, allocatable})
}
