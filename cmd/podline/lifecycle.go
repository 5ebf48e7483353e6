package main

import (
	"context"
	"errors"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/ebpf"
	"github.com/podline/podline/pleg"
)

// discrepancyGrace is how old a change the safety relist finds must be to
// count as one no event delivered: events still in flight are younger.
const discrepancyGrace = 5 * time.Second

// buildLifecycle wires how container changes reach the pipeline. With
// --pleg=relist it is the relist alone. With --pleg=events it is the event
// plane fed by three sources — CRI events, eBPF, cgroup notifications —
// each optional: one that cannot start is logged and the others carry on;
// the relist stays as a safety net that counts what the events missed.
func (a *agent) buildLifecycle(notify func(types.UID)) error {
	o := a.o
	a.lifecycle = append(a.lifecycle, a.relister.Run)
	if o.plegMode == "relist" {
		return nil
	}
	a.relister.Audit(discrepancyGrace)
	cfg := pleg.PlaneConfig{
		Runtime: a.runtime, Cache: a.cache, Notify: notify, CgroupMount: cgroupfs.UnifiedMount(), Layout: a.node.Cgroups,
		OnSystemOOM: a.onSystemOOM, OnContainerOOM: a.onContainerOOM, Log: a.log,
	}

	var tracer *ebpf.Tracer
	if o.plegSource("ebpf") {
		t, err := ebpf.Load(a.log)
		if err != nil {
			a.log.Warn("eBPF event source unavailable; the other sources carry on", "err", err)
		} else {
			tracer, cfg.Kernel = t, t
		}
	}
	var notifier *cgroupfs.Notifier
	retryNotifier := false
	if o.plegSource("cgroup") {
		n, err := cgroupfs.NewNotifier(a.log)
		switch {
		case err == nil:
			notifier, cfg.Cgroups = n, n
		case errors.Is(err, errors.ErrUnsupported):
			a.log.Warn("cgroup notification source unavailable; the other sources carry on", "err", err)
		default:
			// The inotify instance limit, most likely: the user's, so
			// another process may free one.
			a.log.Warn("cgroup notification source unavailable; the other sources carry on, and podline tries again "+
				"(raise fs.inotify.max_user_instances)", "err", err, "every", notifierRetryPeriod)
			retryNotifier = true
		}
	}
	a.plane = pleg.NewPlane(cfg)
	a.lifecycle = append(a.lifecycle, a.plane.Run)

	var events *pleg.CRIEvents
	standIn := func(time.Duration) {}
	if o.plegSource("cri") {
		// Connected and relisted: the runtime answers. Pods held back by
		// its outage go now, not when their back-off ends.
		resync := func(ctx context.Context) error {
			if err := a.relister.Resync(ctx); err != nil {
				return err
			}
			if a.pipeline != nil {
				a.pipeline.RuntimeBack()
			}
			return nil
		}
		events = pleg.NewCRIEvents(a.runtime, a.cache, notify, resync, a.log)
		standIn = events.StandIn
	}
	// A kernel source sees exits only of pods with cgroups of their own;
	// it counts while it runs.
	kernel := newKernelSources(o.cgroupsPerQOS, standIn)

	if tracer != nil {
		a.lifecycle = append(a.lifecycle, func(ctx context.Context) {
			kernel.started()
			defer kernel.stopped()
			defer tracer.Close()
			err := tracer.Run(ctx, func(ev ebpf.Event) {
				switch ev.Kind {
				case ebpf.KindExit:
					a.plane.OnExit(ev.CgroupID, ev.ExitCode, ev.Time)
				case ebpf.KindOOMVictim:
					a.plane.OnOOM(ev.CgroupID, ev.PID, ev.Time)
				case ebpf.KindEmptied:
					a.plane.OnEmptied(ev.CgroupID, ev.Time)
				}
			})
			if err != nil && ctx.Err() == nil {
				a.log.Warn("eBPF event source stopped", "err", err)
			}
		})
		// A lost event may be an exit no other source reports (--pleg-sources=ebpf):
		// read every watched cgroup, and relist, now rather than at the next period.
		a.lifecycle = append(a.lifecycle, func(ctx context.Context) {
			for {
				select {
				case <-ctx.Done():
					return
				case <-tracer.Lost():
					if n := a.plane.Recheck(); n > 0 {
						a.log.Info("after lost eBPF events: emptied cgroups found, inspecting", "cgroups", n)
					}
					if err := a.relister.Resync(ctx); err != nil && ctx.Err() == nil {
						a.log.Warn("relist after lost eBPF events", "err", err)
					}
				}
			}
		})
	}
	runNotifier := func(ctx context.Context, notifier *cgroupfs.Notifier) {
		kernel.started()
		defer kernel.stopped()
		defer notifier.Close()
		err := notifier.Run(ctx, func(n cgroupfs.Notification) {
			switch n.Kind {
			case cgroupfs.Emptied:
				a.plane.OnEmptied(n.CgroupID, n.Time)
			case cgroupfs.OOMKill:
				a.plane.OnOOM(n.CgroupID, 0, n.Time)
			}
		})
		if err != nil && ctx.Err() == nil {
			a.log.Warn("cgroup notification source stopped", "err", err)
		}
	}
	switch {
	case notifier != nil:
		a.lifecycle = append(a.lifecycle, func(ctx context.Context) { runNotifier(ctx, notifier) })
	case retryNotifier:
		a.lifecycle = append(a.lifecycle, func(ctx context.Context) {
			n, err := startLater(ctx, notifierRetryPeriod, func() (*cgroupfs.Notifier, error) { return cgroupfs.NewNotifier(a.log) })
			if err != nil {
				return // ctx ended
			}
			a.plane.SetCgroups(n)
			runNotifier(ctx, n)
		})
	}
	if events != nil {
		a.lifecycle = append(a.lifecycle, events.Run)
	}
	return nil
}

// podCgroupCandidates lists where a pod's cgroup may be, one place per QoS
// class, for adopting what runs before the pod's spec is known.
func (a *agent) podCgroupCandidates(uid types.UID) []string {
	var out []string
	for _, q := range []v1.PodQOSClass{v1.PodQOSGuaranteed, v1.PodQOSBurstable, v1.PodQOSBestEffort} {
		if p := a.node.Cgroups.PodParent(uid, q); p != "" {
			out = append(out, p)
		}
	}
	return out
}
