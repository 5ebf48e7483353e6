# shellcheck shell=bash disable=SC2034  # variables are used by the scripts that source this
# lib.sh: shared settings of podline's real-runtime harness (containerd 2.x +
# runc). Sourced by install-runtime.sh, images.sh and runtime.sh; it only sets
# variables and defines helpers, it starts nothing.
#
# Everything installed or built lives outside the repository so that a warm
# `runtime.sh up` takes seconds on a machine that already ran it once.

PODLINE_SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Binaries, built images and stamp files; survives `down`.
PODLINE_CACHE=${PODLINE_CACHE:-/var/cache/podline}
# containerd root, config, CNI conf and logs; kept across `down`.
PODLINE_STATE=${PODLINE_STATE:-/var/lib/podline-dev}
# Volatile runtime state: containerd socket, state dir, pid file.
PODLINE_RUN=${PODLINE_RUN:-/run/podline-dev}

# Pinned versions (checked against the Go module proxy with
# `go list -m -versions` / `go list -m MODULE@VERSION`).
CONTAINERD_VERSION=${CONTAINERD_VERSION:-v2.4.2}
RUNC_VERSION=${RUNC_VERSION:-v1.5.2}
# crictl matching Kubernetes 1.36; a debugging tool only.
CRICTL_VERSION=${CRICTL_VERSION:-v1.36.0}

PODLINE_BIN=$PODLINE_CACHE/bin
CONTAINERD_SOCK=$PODLINE_RUN/containerd.sock
CONTAINERD_PID=$PODLINE_RUN/containerd.pid
CONTAINERD_CONFIG=$PODLINE_STATE/containerd.toml
CONTAINERD_LOG=$PODLINE_STATE/containerd.log
CRICTL_CONFIG=$PODLINE_STATE/crictl.yaml
CONTAINERD_ROOT=$PODLINE_STATE/containerd
CONTAINERD_STATE=$PODLINE_RUN/containerd
RUNC_ROOT=$PODLINE_RUN/runc
CNI_CONF_DIR=$PODLINE_STATE/cni/net.d
CNI_BIN_DIR=${CNI_BIN_DIR:-/usr/lib/cni}
# A bridge name of our own so `down` never touches someone else's cni0.
CNI_BRIDGE=${CNI_BRIDGE:-podline0}
CNI_NETWORK=${CNI_NETWORK:-podline}
CNI_SUBNET=${CNI_SUBNET:-10.88.0.0/16}

# How runc places containers in cgroups: cgroupfs (directories runc makes)
# or systemd (transient units through systemd's D-Bus API, which needs
# systemd as init: the cgroup v2 guest of vm.sh).
CGROUP_DRIVER=${PODLINE_CGROUP_DRIVER:-cgroupfs}

PAUSE_IMAGE=registry.k8s.io/pause:3.10
# Fixed tag for examples and tests; images.sh also tags the Debian version.
BUSYBOX_IMAGE=docker.io/library/busybox:1.36

# Our binaries first so the v2 shim and our runc win over any Debian ones.
export PATH="$PODLINE_BIN:/usr/local/go/bin:$PATH"
# The Go podline is built and checked with (see the Makefile).
export GOTOOLCHAIN=${GOTOOLCHAIN:-go1.27.3}
export CONTAINER_RUNTIME_ENDPOINT="unix://$CONTAINERD_SOCK"
export IMAGE_SERVICE_ENDPOINT="unix://$CONTAINERD_SOCK"

log() { printf '[podline-harness] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# apt_install PACKAGE...: apt-get install, updating the lists only when they
# are too old to know (or fetch) a package. It waits up to 10 min for dpkg's
# lock: prebuild.sh runs several install scripts at once.
apt_install() {
	log "apt-get install $*"
	export DEBIAN_FRONTEND=noninteractive
	local -a apt=(apt-get -o DPkg::Lock::Timeout=600)
	if ! "${apt[@]}" install -y -q --no-install-recommends "$@" >&2; then
		"${apt[@]}" update -q >&2
		"${apt[@]}" install -y -q --no-install-recommends "$@" >&2
	fi
}

need_root() {
	[[ $(id -u) -eq 0 ]] || die "$1 needs root"
}

# podline_pid PIDFILE prints the pid in PIDFILE if that process is the
# repository's bin/podline (a recycled pid is not).
podline_pid() {
	local pid repo
	[[ -s $1 ]] || return 1
	pid=$(<"$1")
	repo=$(cd "$PODLINE_SCRIPTS/.." && pwd)
	[[ -d /proc/$pid && $(readlink "/proc/$pid/exe" 2>/dev/null) == "$repo/bin/podline"* ]] || return 1
	echo "$pid"
}

# stop_podline PID SECONDS: SIGTERM, then SIGKILL if it is still there
# after SECONDS.
stop_podline() {
	local pid=$1 i
	kill "$pid"
	for ((i = 0; i < $2 * 10; i++)); do [[ -d /proc/$pid ]] || break; sleep 0.1; done
	[[ -d /proc/$pid ]] && kill -9 "$pid"
	log "podline stopped"
}

# remove_podline_leftovers ROOT CGROUP_ROOT: what a podline made once the
# runtime is down: the tmpfs volumes under ROOT (deepest first), and its
# pod cgroups under CGROUP_ROOT in every hierarchy. The caller removes its
# own directories.
remove_podline_leftovers() {
	local root=$1 cgroup_root=$2 m h
	if [[ -d $root ]]; then
		while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done \
			< <(awk -v root="$root/" 'index($5, root) == 1 {print $5}' /proc/self/mountinfo | sort -r)
	fi
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		[[ -d $h$cgroup_root ]] || continue
		find "$h$cgroup_root" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
}

# ctr against our containerd, in the namespace the CRI plugin uses. ctr
# repeats containerd's cgroup v1 deprecation notice on every call; it says
# nothing about this call, so it is dropped.
pctr() {
	ctr --address "$CONTAINERD_SOCK" --namespace k8s.io "$@" \
		2> >(grep -v 'support for cgroup v1 is deprecated' >&2 || true)
}

# crictl against our containerd, without reading /etc/crictl.yaml.
pcrictl() {
	crictl --config /dev/null --runtime-endpoint "unix://$CONTAINERD_SOCK" \
		--image-endpoint "unix://$CONTAINERD_SOCK" --timeout 10s "$@"
}

# containerd_pid prints the pid of our containerd if it is alive.
containerd_pid() {
	local pid
	[[ -s $CONTAINERD_PID ]] || return 1
	pid=$(<"$CONTAINERD_PID")
	[[ -d /proc/$pid ]] || return 1
	[[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$PODLINE_BIN/containerd"* ]] || return 1
	echo "$pid"
}

# containerd_answers is true when our socket serves the containerd API.
containerd_answers() {
	[[ -S $CONTAINERD_SOCK ]] && ctr --address "$CONTAINERD_SOCK" --timeout 2s version >/dev/null 2>&1
}
