// Package pleg is podline's pod lifecycle event generator: it owns the
// observed runtime state of every pod (Cache) and what keeps it current
// and tells the pipeline which pods changed.
//
// With the event plane (the default), three sources report changes as
// they happen, each optional, so one that is unavailable leaves the others
// working:
//
//   - CRIEvents: the runtime's GetContainerEvents stream; after every
//     (re)connect one relist closes the gap;
//   - the kernel (package ebpf): a container's main process exiting, with
//     its exit code, an OOM victim, a cgroup emptying;
//   - cgroup notifications (package cgroupfs): a cgroup emptying, an OOM
//     kill.
//
// The Plane maps cgroups to containers and, on what the kernel says,
// asks the runtime about that one container (a targeted inspection,
// never a relist); only the runtime's answer reaches the cache, since a
// container can make the kernel report an exit of its own (see
// plane_round.go). The periodic
// Relister stays as a safety net: every change it finds that no event
// delivers within a grace after the listing is a discrepancy, applied,
// counted and logged. With --pleg=relist the
// Relister alone runs every second, as the kubelet's generic PLEG does.
//
// Every source merges into the Cache and calls its notify function with
// the UID of each pod whose state moved; the pipeline answers with one
// pass of that pod. The package reads the runtime; it never creates,
// stops or removes anything, and it makes no decisions about pods.
package pleg

import "context"

// Source keeps the Cache current until ctx ends.
type Source interface {
	Run(ctx context.Context)
}

var (
	_ Source = (*Relister)(nil)
	_ Source = (*CRIEvents)(nil)
)
