package main

import (
	"sync"
	"time"

	"github.com/podline/podline/pleg"
)

// kernelSources counts the kernel sources (the eBPF tracer, the cgroup
// notifier) that watch pods now, and sets from it how often the relist
// stands in for an absent event stream: every second while none does, as
// the kubelet's generic PLEG relists, every minute while one does. A
// source counts from when it runs, not from when it was asked for: the
// notifier that waits for an inotify instance watches nothing yet, and a
// source that stopped watches nothing any more.
type kernelSources struct {
	// perPod: pods have cgroups of their own (--cgroups-per-qos), without
	// which no kernel source sees a container exit.
	perPod  bool
	standIn func(time.Duration)

	mu      sync.Mutex
	running int
}

// newKernelSources starts with none running; standIn is told the period
// now and on every change.
func newKernelSources(perPod bool, standIn func(time.Duration)) *kernelSources {
	k := &kernelSources{perPod: perPod, standIn: standIn}
	k.standIn(pleg.StandInPeriod(false))
	return k
}

// started records a source that runs.
func (k *kernelSources) started() { k.add(1) }

// stopped records a source that stopped.
func (k *kernelSources) stopped() { k.add(-1) }

func (k *kernelSources) add(n int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.running += n
	if k.running < 0 {
		panic("BUG: podline: a kernel source stopped that never started")
	}
	k.standIn(pleg.StandInPeriod(k.perPod && k.running > 0))
}
