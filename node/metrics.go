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

// Registration, status and lease writes. A status check that finds nothing
// to write counts as unchanged; errors count each failed request.
var (
	registerCreated  = metrics.NewCounter(`podline_node_registrations_total{result="created"}`)
	registerExisting = metrics.NewCounter(`podline_node_registrations_total{result="existing"}`)
	registerErrors   = metrics.NewCounter(`podline_node_registrations_total{result="error"}`)
	statusWrites     = metrics.NewCounter(`podline_node_status_updates_total{result="ok"}`)
	statusErrors     = metrics.NewCounter(`podline_node_status_updates_total{result="error"}`)
	statusUnchanged  = metrics.NewCounter(`podline_node_status_updates_total{result="unchanged"}`)
	leaseRenewals    = metrics.NewCounter(`podline_node_lease_renewals_total{result="ok"}`)
	leaseErrors      = metrics.NewCounter(`podline_node_lease_renewals_total{result="error"}`)
)

// readyReported is 1 while the Ready condition podline last wrote is True.
var readyReported atomic.Int64

var _ = metrics.NewGauge(`podline_node_ready`, func() float64 { return float64(readyReported.Load()) })

func setReadyGauge(c *v1.NodeCondition) {
	if c != nil && c.Status == v1.ConditionTrue {
		readyReported.Store(1)
	} else {
		readyReported.Store(0)
	}
}
