# shellcheck shell=bash
# containerd-config.sh: writes the harness's containerd config (version 3)
# and CNI network into $PODLINE_STATE. Sourced by runtime.sh after lib.sh.
#
# Every path containerd would otherwise take from its defaults (/var/lib,
# /run/containerd, /etc/cni, /opt/containerd, /var/run/netns) points into our
# own directories, so the harness never meets a system containerd.

# Registry hosts: one <host:port>/hosts.toml per registry, read on every
# pull, so registry.sh can add its CA while containerd runs.
CONTAINERD_HOSTS_DIR=${CONTAINERD_HOSTS_DIR:-$PODLINE_STATE/certs.d}

# stats_collect_period prints the CRI runtime's setting. containerd 2.x
# samples the CPU use of every container and sandbox each second (its
# default) to serve UsageNanoCores; at 100 pods that is ~16 % of a core
# here, idle. podline reads stats from cgroupfs itself when asked, so
# nothing needs those samples: the harness samples every 10 minutes. The
# kubelet reads CPU usage from CRI stats and needs the default, which
# CONTAINERD_STATS_COLLECT_PERIOD=default keeps (bench/suite runs the
# kubelet, and podline beside it, on such a containerd).
stats_collect_period() {
	local period=${CONTAINERD_STATS_COLLECT_PERIOD:-10m}
	if [[ $period == default ]]; then
		echo '  # stats_collect_period: containerd'"'"'s default'
		return
	fi
	echo "  stats_collect_period = \"$period\""
}

# systemd_cgroup prints the runc option for $CGROUP_DRIVER.
systemd_cgroup() {
	case $CGROUP_DRIVER in
	cgroupfs) echo false ;;
	systemd) echo true ;;
	*) die "PODLINE_CGROUP_DRIVER=$CGROUP_DRIVER: want cgroupfs or systemd" ;;
	esac
}

write_containerd_config() {
	local tmp=$CONTAINERD_CONFIG.tmp systemd
	systemd=$(systemd_cgroup)
	mkdir -p "$PODLINE_STATE" "$CNI_CONF_DIR" "$PODLINE_STATE/opt" "$CONTAINERD_HOSTS_DIR"
	cat >"$tmp" <<TOML
# Written by scripts/runtime.sh up; edits are overwritten.
# Version 3 is read by every containerd 2.x (2.4 migrates it in memory and
# logs a warning about that).
version = 3
root = "$CONTAINERD_ROOT"
state = "$CONTAINERD_STATE"

[grpc]
  address = "$CONTAINERD_SOCK"

[ttrpc]
  address = "$CONTAINERD_SOCK.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "$PODLINE_STATE/opt"

# NRI would listen on /var/run/nri/nri.sock; podline does not use it.
[plugins."io.containerd.nri.v1.nri"]
  disable = true

[plugins."io.containerd.cri.v1.runtime"]
  enable_selinux = false
  # Without this every RunPodSandbox fails ("can't get final child's PID from
  # pipe"): the process may not lower its oom_score_adj (no CAP_SYS_RESOURCE).
  restrict_oom_score_adj = true
  disable_apparmor = true
  netns_mounts_under_state_dir = true
  cdi_spec_dirs = []
$(stats_collect_period)

  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"

    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        SystemdCgroup = $systemd
        BinaryName = "$PODLINE_BIN/runc"
        Root = "$RUNC_ROOT"

  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["$CNI_BIN_DIR"]
    conf_dir = "$CNI_CONF_DIR"
    max_conf_num = 1

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"

  [plugins."io.containerd.cri.v1.images".registry]
    config_path = "$CONTAINERD_HOSTS_DIR"

  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "$PAUSE_IMAGE"

[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
TOML
	mv "$tmp" "$CONTAINERD_CONFIG"
}

# write_cni_config writes the pod network: a bridge of our own name with
# host-local addresses from $CNI_SUBNET, and portmap for hostPort.
# containerd adds the loopback interface itself. host-local keeps its leases
# under $PODLINE_STATE instead of /var/lib/cni/networks so `down` can clear
# them.
write_cni_config() {
	mkdir -p "$CNI_CONF_DIR" "$PODLINE_STATE/cni/networks"
	local tmp=$CNI_CONF_DIR/.10-podline.conflist.tmp
	cat >"$tmp" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NETWORK",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$CNI_BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$PODLINE_STATE/cni/networks",
        "ranges": [[{ "subnet": "$CNI_SUBNET" }]],
        "routes": [{ "dst": "0.0.0.0/0" }]
      }
    },
    {
      "type": "portmap",
      "capabilities": { "portMappings": true }
    }
  ]
}
JSON
	mv "$tmp" "$CNI_CONF_DIR/10-podline.conflist"
}
