// Package cgroupfs owns the pod cgroups podline creates under its cgroup
// root: where a pod's cgroup lives (the kubelet's cgroupfs-driver layout:
// kubepods, kubepods/burstable, kubepods/besteffort) and removing it once
// the pod is gone, which runtimes do not do. It never modifies a cgroup it
// did not create.
package cgroupfs
