// Package cgroupfs is podline's edge to the cgroup filesystem. It owns the
// pod cgroups podline creates under its cgroup root: where a pod's cgroup
// lives (the kubelet's layout: kubepods, kubepods/burstable,
// kubepods/besteffort, named by the cgroupfs driver or as systemd slices),
// the QoS and pod-level limits (Tree, through containerd/cgroups, and with
// the systemd driver through transient slice units on systemd's D-Bus
// API), and removing a pod's cgroup once the pod is gone, which runtimes
// do not do. It reads resource stats on demand (Reader), writing nothing
// while doing so. It also owns the cgroup notifications of the event plane
// (Notifier): a container's cgroup emptying, and OOM kills in it.
// Registering an OOM eventfd through cgroup.event_control changes no
// setting. It never modifies a cgroup it did not create.
package cgroupfs
