// Package ebpf is podline's kernel edge for container lifecycle events. Three
// BPF programs on BTF tracepoints tell podline, microseconds after the fact,
// that a process that is pid 1 of its pid namespace exited in a watched
// container's cgroup (with its exit code: the container's main process, or
// one the container made in a namespace of its own, so pleg takes it as a
// hint to ask the runtime, not as the container's state),
// that the OOM killer picked a victim (any victim: podline counts those
// outside its pods as system OOMs), and that a watched cgroup became empty.
//
// podline registers a container by the id of its cgroup2 directory
// (cgroupfs.CgroupID, [Tracer.Watch]); the programs drop every event of an unwatched
// cgroup in the kernel, so the thousands of unrelated exits of a busy node
// never wake podline. Events arrive through one BPF ring buffer read by
// [Tracer.Run].
//
// The package owns the BPF objects (bpf/events.c and the generated
// events_bpfel.{go,o}, see generate.go) and the ring buffer reader. It does
// not create, move or remove cgroups (cgroupfs does) and does not decide what
// an event means for a pod (pleg does).
//
// Requirements: a kernel with BTF (/sys/kernel/btf/vmlinux) whose
// sched_process_exit tracepoint passes group_dead (6.18 does; kernels that
// pass only the task refuse the program), and CAP_BPF with CAP_PERFMON (or
// root). [Load] wraps [ErrUnsupported] and says which one is missing.
//
// Order for a container: KindExit when its main process is gone (the kernel
// then kills what else ran in its pid namespace), then KindEmptied once
// nothing is left in the cgroup.
package ebpf
