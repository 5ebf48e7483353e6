// Package kubelet runs the upstream kubelet in standalone mode (a static pod
// directory, no API server) so that the benchmarks can measure it side by
// side with podline, against the same CRI endpoint and the same manifests,
// through the same read-only /pods. With Config.Kubeconfig it joins an API
// server as a node instead, for the cluster benchmark.
//
// It owns one kubelet process and everything that process leaves on the
// host: its directory, the cgroups under its cgroup root, the mounts under
// its root dir, and what the kubelet changes host-wide at start (kernel
// tunables, iptables chains, /var/lib/kubelet/device-plugins and the links
// in /var/log/containers), which Cleanup puts back as they were. It never
// touches the CRI runtime or its pods (the kubelet leaves them running when
// it stops), cgroups outside the cgroup root, or a host setting that was
// already as the kubelet wants it.
//
// The binary comes from scripts/install-kube.sh.
package kubelet
