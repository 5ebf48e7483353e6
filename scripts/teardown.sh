# shellcheck shell=bash
# teardown.sh: `runtime.sh down`: stops everything the harness started and
# leaves no process, mount, bridge or lease behind. Sourced by runtime.sh
# after lib.sh. Every step tolerates "nothing there", so down is safe to run
# twice or when nothing runs. It touches only what is ours: processes run
# from $PODLINE_BIN with our config or socket, mounts under $PODLINE_STATE
# and $PODLINE_RUN, the $CNI_BRIDGE link, the $CNI_NETWORK network's CNI
# cache files and portmap rules.

# shellcheck source-path=SCRIPTDIR source=cni-iptables.sh
source "$PODLINE_SCRIPTS/cni-iptables.sh"

# pids_of EXE NEEDLE: pids running EXE (also once the file was replaced)
# whose command line contains NEEDLE. The needle (our config file or socket)
# keeps a second harness that shares $PODLINE_CACHE out of reach.
pids_of() {
	local exe=$1 needle=$2 p target
	for p in /proc/[0-9]*; do
		target=$(readlink "$p/exe" 2>/dev/null) || continue
		[[ $target == "$exe" || $target == "$exe (deleted)" ]] || continue
		tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$needle" && echo "${p#/proc/}"
	done
	return 0
}

# alive PID: the process exists and is not a zombie. A zombie counts as gone:
# its parent (often init, which may reap late) owns it, not us.
alive() {
	local stat
	stat=$(<"/proc/$1/stat") 2>/dev/null || return 1
	stat=${stat##*) }
	[[ ${stat:0:1} != Z ]]
}

# wait_gone SECONDS PID...: true once none of the pids is alive.
wait_gone() {
	local deadline=$((SECONDS + $1)) p alive
	shift
	while ((SECONDS < deadline)); do
		alive=0
		for p in "$@"; do alive "$p" && alive=1; done
		((alive)) || return 0
		sleep 0.1
	done
	return 1
}

remove_pods() {
	containerd_answers || return 0
	log "removing all pods"
	pcrictl rmp -fa >/dev/null 2>&1 || log "warning: crictl rmp -fa failed; runc cleanup follows"
}

stop_containerd() {
	local -a pids
	mapfile -t pids < <(pids_of "$PODLINE_BIN/containerd" "$CONTAINERD_CONFIG")
	((${#pids[@]})) || return 0
	log "stopping containerd (${pids[*]})"
	kill -TERM "${pids[@]}" 2>/dev/null || true
	wait_gone 15 "${pids[@]}" && return 0
	kill -KILL "${pids[@]}" 2>/dev/null || true
	wait_gone 5 "${pids[@]}" || die "containerd ${pids[*]} survived SIGKILL"
}

# kill_containers deletes what runc still knows in our runc root: the
# processes of pods that containerd could not remove.
kill_containers() {
	[[ -x $PODLINE_BIN/runc && -d $RUNC_ROOT ]] || return 0
	local root id
	for root in "$RUNC_ROOT"/*/; do
		[[ -d $root ]] || continue
		while read -r id; do
			[[ -n $id ]] || continue
			log "runc delete -f $id"
			runc --root "$root" delete -f "$id" >/dev/null 2>&1 || true
		done < <(runc --root "$root" list -q 2>/dev/null)
	done
}

kill_shims() {
	local -a pids
	mapfile -t pids < <(pids_of "$PODLINE_BIN/containerd-shim-runc-v2" "-address $CONTAINERD_SOCK")
	((${#pids[@]})) || return 0
	log "killing leftover shims (${pids[*]})"
	kill -KILL "${pids[@]}" 2>/dev/null || true
	wait_gone 5 "${pids[@]}" || log "warning: shims ${pids[*]} still alive"
}

# our_mounts prints mount points under our directories, deepest first.
our_mounts() {
	local state run
	state=$(realpath -m "$PODLINE_STATE")
	run=$(realpath -m "$PODLINE_RUN")
	# Field 5 of mountinfo is the mount point, with octal escapes for spaces.
	awk '{ print $5 }' /proc/self/mountinfo | while read -r m; do
		m=$(printf '%b' "$m")
		[[ $m == "$state"/* || $m == "$state" || $m == "$run"/* || $m == "$run" ]] && echo "$m"
	done | awk '{ print length($0) "\t" $0 }' | sort -rn | cut -f2- | awk '!seen[$0]++'
}

unmount_ours() {
	local m n=0
	# Stacked mounts on one point need one umount each: loop until none left.
	while [[ -n $(our_mounts) ]] && ((n++ < 10)); do
		while read -r m; do
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
		done < <(our_mounts)
	done
	[[ -z $(our_mounts) ]] || log "warning: mounts left: $(our_mounts | tr '\n' ' ')"
}

remove_network() {
	if ip link show "$CNI_BRIDGE" >/dev/null 2>&1; then
		log "deleting bridge $CNI_BRIDGE"
		ip link delete "$CNI_BRIDGE" || true
	fi
	# Leases of pods that were killed without a CNI DEL would leak addresses.
	rm -rf "${PODLINE_STATE:?}/cni/networks"
	# libcni caches results as /var/lib/cni/results/<network>-<id>-<ifname>.
	rm -f /var/lib/cni/results/"$CNI_NETWORK"-* /var/lib/cni/results/cni-loopback-*
	rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null || true
}

# remove_stale_shim_sockets removes sockets in containerd's fixed shim
# directory that nobody listens on any more (all ours are dead by now; a
# live socket of another containerd stays).
remove_stale_shim_sockets() {
	local dir=/run/containerd/s sock
	[[ -d $dir ]] || return 0
	for sock in "$dir"/*; do
		[[ -S $sock ]] || continue
		grep -qF " $sock" /proc/net/unix || rm -f "$sock"
	done
	rmdir "$dir" /run/containerd 2>/dev/null || true
}

# remove_empty_cgroups removes the k8s.io parent cgroups that runc made for
# pods without a cgroup parent, once empty. rmdir fails on a cgroup that
# still has children or tasks, so nothing in use is touched.
remove_empty_cgroups() {
	local dir
	for dir in /sys/fs/cgroup/*/k8s.io /sys/fs/cgroup/k8s.io; do
		if [[ -d $dir ]]; then rmdir "$dir" 2>/dev/null || true; fi
	done
}

runtime_down() {
	remove_pods
	stop_containerd
	kill_containers
	kill_shims
	unmount_ours
	remove_network
	remove_portmap_rules
	remove_empty_cgroups
	remove_stale_shim_sockets
	rm -f "$CONTAINERD_PID" "$CONTAINERD_SOCK" "$CONTAINERD_SOCK.ttrpc"
	log "down"
}
