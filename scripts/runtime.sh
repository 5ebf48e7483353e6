#!/usr/bin/env bash
# runtime.sh up|down|status|env|purge: runs the real containerd 2.x + runc
# that podline's `make run` and end-to-end tests talk to.
#   up      install (cached), configure, start containerd, import the images;
#           when it already runs, only verify it
#   down    remove all pods, stop containerd and its shims, unmount and delete
#           everything the harness made at run time (safe to repeat)
#   status  exit 0 when containerd's CRI answers on our socket
#   env     print `export ...` lines: eval "$(scripts/runtime.sh env)"
#   purge   down, then delete $PODLINE_STATE and $PODLINE_RUN (keeps the cache)
# PODLINE_RUNTIME_INSTALL=0 makes `up` use the binaries already in
# $PODLINE_BIN and install nothing (vm.sh's guest, which has no Go and
# shares the host's); PODLINE_CGROUP_DRIVER=systemd configures runc for
# the systemd cgroup driver (lib.sh).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source-path=SCRIPTDIR source=containerd-config.sh
source "$PODLINE_SCRIPTS/containerd-config.sh"
# shellcheck source-path=SCRIPTDIR source=teardown.sh
source "$PODLINE_SCRIPTS/teardown.sh"

# cri_answers is true when the CRI plugin (not just containerd) serves.
cri_answers() { pcrictl version >/dev/null 2>&1; }

start_containerd() {
	mkdir -p "$PODLINE_RUN" "$PODLINE_STATE"
	log "starting containerd (log: $CONTAINERD_LOG)"
	# setsid: containerd must outlive this script and the shell that ran it.
	setsid "$PODLINE_BIN/containerd" --config "$CONTAINERD_CONFIG" \
		</dev/null >>"$CONTAINERD_LOG" 2>&1 &
	local deadline=$((SECONDS + 30)) pid
	until cri_answers; do
		((SECONDS < deadline)) || die "containerd did not answer in 30s (see $CONTAINERD_LOG)"
		sleep 0.1
	done
	# Looked up rather than taken from $!: setsid forks when it happens to
	# lead a process group, and then $! is not containerd.
	pid=$(pids_of "$PODLINE_BIN/containerd" "$CONTAINERD_CONFIG" | head -n 1)
	[[ -n $pid ]] || die "containerd answers but its process was not found"
	echo "$pid" >"$CONTAINERD_PID"
}

# check_network fails when the CRI plugin did not take our CNI config.
check_network() {
	local info
	info=$(pcrictl info 2>/dev/null) || die "crictl info failed"
	grep -q "\"$CNI_NETWORK\"" <<<"$info" || die "CRI did not load CNI network $CNI_NETWORK"
}

# clear_stale_pods removes pods a freshly started containerd remembers from
# before: `down` after a crash kills their processes through runc, but only
# containerd can forget them. Nothing of theirs runs at this point.
clear_stale_pods() {
	[[ -n $(pcrictl pods -q 2>/dev/null) ]] || return 0
	log "removing pods left from a previous run"
	pcrictl rmp -fa >/dev/null
}

# write_crictl_config lets a plain `crictl` (with CRI_CONFIG_FILE from `env`)
# reach our containerd without flags or warnings.
write_crictl_config() {
	printf '%s\n' "runtime-endpoint: $CONTAINER_RUNTIME_ENDPOINT" \
		"image-endpoint: $IMAGE_SERVICE_ENDPOINT" 'timeout: 10' >"$CRICTL_CONFIG"
}

cmd_up() {
	need_root "runtime.sh up"
	if containerd_pid >/dev/null && cri_answers; then
		"$PODLINE_SCRIPTS/images.sh" import
		log "already up: $CONTAINER_RUNTIME_ENDPOINT"
		return
	fi
	if [[ ${PODLINE_RUNTIME_INSTALL:-1} == 0 ]]; then
		local bin
		for bin in containerd containerd-shim-runc-v2 ctr runc; do
			[[ -x $PODLINE_BIN/$bin ]] || die "$PODLINE_BIN/$bin missing (PODLINE_RUNTIME_INSTALL=0 installs nothing)"
		done
	else
		"$PODLINE_SCRIPTS/install-runtime.sh"
	fi
	# A containerd of ours that does not answer is hung or half-started:
	# clear it before starting afresh.
	if containerd_pid >/dev/null || [[ -e $CONTAINERD_SOCK ]]; then
		runtime_down
	fi
	write_containerd_config
	write_cni_config
	write_crictl_config
	start_containerd
	check_network
	clear_stale_pods
	"$PODLINE_SCRIPTS/images.sh" import
	log "up: $CONTAINER_RUNTIME_ENDPOINT"
}

cmd_status() {
	if cri_answers; then
		echo "containerd answers on $CONTAINERD_SOCK (pid $(containerd_pid || echo '?'))"
		return 0
	fi
	echo "containerd does not answer on $CONTAINERD_SOCK"
	return 1
}

cmd_env() {
	printf 'export %s=%q\n' CONTAINER_RUNTIME_ENDPOINT "$CONTAINER_RUNTIME_ENDPOINT" \
		IMAGE_SERVICE_ENDPOINT "$IMAGE_SERVICE_ENDPOINT" \
		CONTAINERD_ADDRESS "$CONTAINERD_SOCK" CONTAINERD_NAMESPACE k8s.io \
		CRI_CONFIG_FILE "$CRICTL_CONFIG" \
		PODLINE_CACHE "$PODLINE_CACHE" PODLINE_STATE "$PODLINE_STATE" PODLINE_RUN "$PODLINE_RUN" \
		PODLINE_PAUSE_IMAGE "$PAUSE_IMAGE" PODLINE_BUSYBOX_IMAGE "$BUSYBOX_IMAGE"
	# Left for the caller's shell to expand.
	# shellcheck disable=SC2016
	printf 'export PATH=%q:"$PATH"\n' "$PODLINE_BIN"
}

cmd_purge() {
	runtime_down
	rm -rf "${PODLINE_STATE:?}" "${PODLINE_RUN:?}"
	log "purged $PODLINE_STATE and $PODLINE_RUN (cache $PODLINE_CACHE kept)"
}

case ${1:-} in
up) cmd_up ;;
down) need_root "runtime.sh down" && runtime_down ;;
status) cmd_status ;;
env) cmd_env ;;
purge) need_root "runtime.sh purge" && cmd_purge ;;
*)
	echo "usage: $0 up|down|status|env|purge" >&2
	exit 2
	;;
esac
