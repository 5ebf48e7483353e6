#!/usr/bin/env bash
# vm.sh image|run|test|status: a Debian 12 guest that boots the unified
# cgroup v2 hierarchy with systemd as PID 1, for what this host cannot
# boot into (it runs cgroup v1 hybrid without systemd).
#   image   build the guest once (cached by a hash of its recipe): Debian's
#           kernel (linux-image-amd64, 6.1 with BTF) and a debootstrap root
#           with systemd, dbus and the runtime's Debian packages
#   run [--driver cgroupfs|systemd] [--cgroup v2|v1] [--no-runtime]
#       [--append KERNEL-ARGS] [--] CMD...
#           boot it, start its own containerd (this host's scripts, the
#           host's binaries and images, runc on the given cgroup driver),
#           run CMD as root in /podline (the checkout, read-only), print its
#           output, power off and exit with CMD's status. --cgroup v1 boots
#           the same guest on the legacy hierarchy
#   test [--driver D] [--all] [-- GO-TEST-FLAGS...]
#           build podline and the e2e test binary on the host and run the
#           e2e tests that need only the runtime in the guest: the set that
#           checks cgroup v2 behaviour ($VM_E2E_RUN), or all of them
#   status  the cached guest, and the last run's exit status and logs
#
# Under software emulation (TCG): this host's KVM runs guests, but a page a
# guest first touches costs milliseconds, so a kernel takes minutes to
# boot where TCG takes seconds. Times measured in the guest are good for
# ratios between runs in it, not against the host.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REPO_ROOT=$(cd "$PODLINE_SCRIPTS/.." && pwd)
# Built guests, one directory per recipe hash, and the downloaded .debs.
VM_CACHE=$PODLINE_CACHE/vm
# The last run: scratch disk, job directory, logs; replaced by each run.
VM_STATE=${PODLINE_VM_STATE:-/var/lib/podline-vm}
VM_MEM=${VM_MEM:-3072}
VM_SMP=${VM_SMP:-2}
# A guest that runs longer is killed: a hung boot must not hold the lock.
VM_TIMEOUT=${VM_TIMEOUT:-3600}
VM_SUITE=bookworm
VM_MIRROR=${VM_MIRROR:-http://deb.debian.org/debian}

# What the guest's root holds beyond debootstrap's minbase, and why:
#   systemd systemd-sysv dbus udev   PID 1, its D-Bus API (the systemd cgroup
#                                    driver), device units for the disks
#   linux-image-amd64 kmod           Debian's 6.1 kernel and its modules
#                                    (overlay, 9p, bridge, veth, netfilter)
#   the rest                         what install-runtime.sh installs on the
#                                    host to run containers, less the build
#                                    tools: CNI plugins, iptables for the
#                                    bridge and portmap, libseccomp for runc,
#                                    busybox-static for images.sh's refs;
#                                    e2fsprogs and procps for the tests
VM_PACKAGES=(systemd systemd-sysv dbus udev kmod linux-image-amd64
	containernetworking-plugins iptables iproute2 libseccomp2 busybox-static
	util-linux mount e2fsprogs procps curl ca-certificates)

# Modules loaded at boot: the 9p shares and the output port before the job
# starts, and what containerd's overlayfs and the CNI bridge need.
VM_MODULES=(9p 9pnet_virtio virtio_console overlay bridge br_netfilter veth
	nf_conntrack nf_nat xt_conntrack xt_MASQUERADE xt_mark xt_comment)

# Where the guest finds what the host shares with it (virtio-9p tags and
# mount points). /vm/job is the only one it may write.
declare -A VM_SHARES=(
	[podline]=/podline
	[pcbin]=/var/cache/podline/bin
	[pcimages]=/var/cache/podline/images
	[vmbin]=/vm/bin
	[vmjob]=/vm/job
)
GUEST_JOB=/vm/job
GUEST_PORT=/dev/virtio-ports/podline.out

# e2e tests that check cgroup v2 behaviour: pods run and are torn down with
# their cgroups, QoS and pod cgroups carry the limits, OOM kills and exits
# are seen, stats (with PSI) reach /stats/summary and /metrics/resource,
# the pids limit holds, restarts back off and a killed podline adopts.
# The tests' waits for pods and agents, stretched: a pod starts in ~5 s in
# the emulated guest where the host takes 0.2 s (e2e/agent_test.go).
VM_E2E_TIME_SCALE=${VM_E2E_TIME_SCALE:-5}
VM_E2E_RUN=${VM_E2E_RUN:-'^(TestBusyboxRunsAndLogs|TestPodAndContainerLimitsAreInTheCgroupFiles|TestStatsShowCPUAndMemory|TestOOMKilled|TestEachSourceSeesExitCodes|TestPodMaxPidsBoundsForks|TestOnFailureRestartsWithBackoff|TestNeverEndsFailed|TestKill9RestartAdopts)$'}

usage() {
	sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//p}' "${BASH_SOURCE[0]}" >&2
	exit 2
}

# ---- the image ------------------------------------------------------------

host_packages() {
	local p
	for p in qemu-system-x86 debootstrap e2fsprogs; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || echo "$p"
	done
}

install_host_packages() {
	local missing
	mapfile -t missing < <(host_packages)
	((${#missing[@]} == 0)) || apt_install "${missing[@]}"
}

# umount_under DIR: what debootstrap left mounted in DIR (proc, sys) after a
# failure, deepest first.
umount_under() {
	local m
	awk -v d="$1/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
}

# configure_root ROOT: makes the debootstrap root a guest that boots
# without a question, mounts what the host shares and runs the job.
configure_root() {
	local root=$1 tag m
	echo podline-vm >"$root/etc/hostname"
	printf '127.0.0.1 localhost\n127.0.1.1 podline-vm\n::1 localhost\n' >"$root/etc/hosts"
	# podline refuses to start without one; the guest has no network beyond
	# its pods' bridge, so the address only needs to exist.
	echo 'nameserver 10.0.2.3' >"$root/etc/resolv.conf"
	# A fixed machine id: a root without one is a first boot every time,
	# and systemd then re-presets every unit.
	echo 0123456789abcdef0123456789abcdef >"$root/etc/machine-id"
	{
		echo '/dev/vda / ext4 rw,noatime 0 0'
		echo '/dev/vdb /var/lib/podline-dev ext4 rw,noatime 0 0'
		for tag in "${!VM_SHARES[@]}"; do
			m=ro,cache=loose
			[[ $tag == vmjob ]] && m=rw,cache=none
			# After the modules load: the shares' virtio channels exist only
			# once 9pnet_virtio has probed them, and a mount racing it fails.
			echo "$tag ${VM_SHARES[$tag]} 9p trans=virtio,version=9p2000.L,msize=512000,$m,x-systemd.requires=systemd-modules-load.service 0 0"
		done
	} >"$root/etc/fstab"
	for tag in "${!VM_SHARES[@]}"; do mkdir -p "$root${VM_SHARES[$tag]}"; done
	mkdir -p "$root/var/lib/podline-dev"
	printf '%s\n' "${VM_MODULES[@]}" >"$root/etc/modules-load.d/podline-vm.conf"
	cat >"$root/etc/systemd/system/podline-vm-job.service" <<UNIT
[Unit]
Description=the command scripts/vm.sh run passed in $GUEST_JOB
After=local-fs.target remote-fs.target dbus.service systemd-modules-load.service
Wants=dbus.service
RequiresMountsFor=${VM_SHARES[*]} /var/lib/podline-dev
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=oneshot
Environment=HOME=/root
ExecStart=${VM_SHARES[podline]}/scripts/vm.sh guest
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
UNIT
	# A boot that fails (a mount, a unit) powers off with its failed units
	# on the console rather than wait for a login nobody gives.
	local unit
	for unit in emergency rescue; do
		mkdir -p "$root/etc/systemd/system/$unit.service.d"
		printf '%s\n' '[Service]' 'Type=oneshot' 'ExecStartPre=' 'ExecStart=' \
			'ExecStart=-/bin/systemctl --no-pager --failed' \
			'ExecStart=/bin/systemctl --force poweroff' >"$root/etc/systemd/system/$unit.service.d/poweroff.conf"
	done
	systemctl --root="$root" enable podline-vm-job.service
	systemctl --root="$root" set-default multi-user.target
	# Nothing else runs: no logins, no timers that would compete with the
	# job for the emulated CPU.
	systemctl --root="$root" mask serial-getty@ttyS0.service getty@tty1.service \
		apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer \
		e2scrub_reap.service fstrim.timer systemd-tmpfiles-clean.timer
}

# build_image DIR: the guest's kernel, initrd and root filesystem in DIR.
build_image() {
	local dir=$1 work=$1.tmp root
	root=$work/root
	rm -rf "$work"
	mkdir -p "$root" "$VM_CACHE/debs"
	trap 'umount_under "$work"' EXIT
	log "debootstrap $VM_SUITE with systemd and Debian's kernel (a cold build takes minutes)"
	# --cache-dir keeps the .debs: a changed recipe downloads only what is new.
	debootstrap --variant=minbase --cache-dir="$VM_CACHE/debs" \
		--include="$(IFS=,; echo "${VM_PACKAGES[*]}")" \
		"$VM_SUITE" "$root" "$VM_MIRROR" >"$work/debootstrap.log" 2>&1 ||
		die "debootstrap failed: see $work/debootstrap.log"
	# An initrd of the few modules that mount the root, not Debian's
	# "most": the emulated CPU unpacks a 37 MB one for seconds.
	printf '%s\n' virtio_pci virtio_blk ext4 crc32c_generic >>"$root/etc/initramfs-tools/modules"
	echo MODULES=list >"$root/etc/initramfs-tools/conf.d/podline-vm"
	mount -t proc proc "$root/proc"
	chroot "$root" update-initramfs -u -k all >"$work/initramfs.log" 2>&1 ||
		die "update-initramfs failed: see $work/initramfs.log"
	umount_under "$work"
	trap - EXIT
	configure_root "$root"
	local vmlinuz initrd
	vmlinuz=$(find "$root/boot" -name 'vmlinuz-*' | sort | tail -n 1)
	initrd=$(find "$root/boot" -name 'initrd.img-*' | sort | tail -n 1)
	[[ -n $vmlinuz && -n $initrd ]] || die "no kernel or initrd in $root/boot"
	cp "$vmlinuz" "$work/vmlinuz"
	cp "$initrd" "$work/initrd.img"
	rm -rf "$root/var/cache/apt/archives"/*.deb "$root/var/lib/apt/lists"/*
	# The root as an ext4 image, with room for the tests' files (a run
	# writes to a copy-on-write snapshot of it; containerd has its own disk).
	local mb
	mb=$(du -sm "$root" | cut -f1)
	mkfs.ext4 -q -F -L podline-root -d "$root" "$work/root.img" "$((mb + 1024))M"
	rm -rf "$root"
	chmod 0444 "$work/root.img"
	rm -rf "$dir"
	mv "$work" "$dir"
}

# image_key: a hash of everything the image is made from.
image_key() {
	{
		echo "$VM_SUITE $VM_MIRROR ${VM_PACKAGES[*]} ${VM_MODULES[*]}"
		declare -p VM_SHARES
		declare -f configure_root build_image
	} | sha256sum | cut -c1-16
}

# image_dir prints the built guest's directory, building it first if needed.
image_dir() {
	local dir
	dir=$VM_CACHE/$(image_key)
	if [[ ! -f $dir/root.img ]]; then
		install_host_packages
		local start=$SECONDS
		build_image "$dir" >&2
		find "$VM_CACHE" -mindepth 1 -maxdepth 1 -type d ! -name debs ! -name "$(basename "$dir")" \
			-exec rm -rf {} +
		log "guest image built in $((SECONDS - start))s: $dir"
	fi
	echo "$dir"
}

VM_LOCKED=0
lock() {
	((VM_LOCKED)) && return
	VM_LOCKED=1
	mkdir -p "$VM_CACHE"
	exec 9>"$PODLINE_CACHE/.vm.lock"
	# One guest at a time: the emulated CPUs take both of this host's cores.
	flock -n 9 || { log "waiting for another vm.sh"; flock 9; }
}

cmd_image() {
	need_root "vm.sh image"
	lock
	image_dir
}

# ---- a run ------------------------------------------------------------------

# write_job DRIVER RUNTIME CMD...: what the guest's job reads.
write_job() {
	local driver=$1 runtime=$2 images
	shift 2
	images=$("$PODLINE_SCRIPTS/images.sh" build)
	local -a tars
	mapfile -t tars <<<"$images"
	rm -rf "$VM_STATE/job"
	mkdir -p "$VM_STATE/job"
	local VM_DRIVER=$driver VM_RUNTIME=$runtime
	local VM_PAUSE_TAR=${VM_SHARES[pcimages]}/${tars[0]##*/}
	local VM_BUSYBOX_TAR=${VM_SHARES[pcimages]}/${tars[1]##*/}
	local -a VM_CMD=("$@")
	declare -p VM_DRIVER VM_RUNTIME VM_PAUSE_TAR VM_BUSYBOX_TAR VM_CMD >"$VM_STATE/job/job.env"
}

# scratch_disk: a fresh ext4 disk for containerd's root and the tests'
# files, sparse, made here in a second rather than by the emulated guest.
scratch_disk() {
	local img=$VM_STATE/scratch.img
	rm -f "$img"
	truncate -s 16G "$img"
	mkfs.ext4 -q -F -L podline-scratch -E lazy_itable_init=0,lazy_journal_init=0 "$img"
}

# boot KERNEL-ARGS: runs the guest until it powers off (or VM_TIMEOUT),
# printing what the job writes to its output port; returns qemu's status.
boot() {
	local dir=$1 append=$2 tag mode
	# shellcheck disable=SC2054 # qemu's options take comma lists
	local -a qemu=(qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp "$VM_SMP" -m "$VM_MEM"
		-nodefaults -display none -no-reboot -nic none
		-kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" -append "$append"
		-drive "file=$dir/root.img,if=virtio,format=raw,snapshot=on"
		-drive "file=$VM_STATE/scratch.img,if=virtio,format=raw,cache=unsafe"
		-serial "file:$VM_STATE/console.log"
		-device virtio-rng-pci
		-device virtio-serial-pci -chardev "file,id=out,path=$VM_STATE/out.log"
		-device virtserialport,chardev=out,name=podline.out)
	declare -A paths=(
		[podline]=$REPO_ROOT [pcbin]=$PODLINE_BIN [pcimages]=$PODLINE_CACHE/images
		[vmbin]=$VM_STATE/bin [vmjob]=$VM_STATE/job
	)
	mkdir -p "$VM_STATE/bin"
	for tag in "${!VM_SHARES[@]}"; do
		mode=readonly=on
		[[ $tag == vmjob ]] && mode=readonly=off
		qemu+=(-virtfs "local,path=${paths[$tag]},mount_tag=$tag,security_model=none,$mode")
	done
	: >"$VM_STATE/out.log"
	# Neither qemu nor tail keeps the lock (fd 9) once this script is gone.
	timeout --kill-after=10 "$VM_TIMEOUT" "${qemu[@]}" </dev/null >"$VM_STATE/qemu.log" 2>&1 9>&- &
	local qpid=$! rc=0
	# Stopped with this script: an interrupted run leaves no guest behind
	# (timeout passes the signal on to qemu).
	trap 'kill "$qpid" 2>/dev/null' EXIT
	tail -n +1 -F --pid="$qpid" "$VM_STATE/out.log" 2>/dev/null 9>&- &
	local tpid=$!
	wait "$qpid" || rc=$?
	wait "$tpid" || true
	trap - EXIT
	((rc != 124)) || log "guest still running after ${VM_TIMEOUT}s: killed"
	return "$rc"
}

cmd_run() {
	need_root "vm.sh run"
	local driver=$CGROUP_DRIVER cgroup=v2 runtime=1 extra=''
	while (($#)); do
		case $1 in
		--driver) driver=$2; shift 2 ;;
		--cgroup) cgroup=$2; shift 2 ;;
		--no-runtime) runtime=0; shift ;;
		--append) extra=$2; shift 2 ;;
		--) shift; break ;;
		-*) usage ;;
		*) break ;;
		esac
	done
	(($#)) || usage
	[[ $driver == cgroupfs || $driver == systemd ]] || die "--driver $driver: want cgroupfs or systemd"
	# systemd 252 boots either hierarchy; v1 is the hybrid layout this
	# host has (issue 31 compares the two on one guest).
	local unified
	case $cgroup in
	v2) unified=1 ;;
	v1) unified=0 ;;
	*) die "--cgroup $cgroup: want v2 or v1" ;;
	esac
	lock
	local dir
	dir=$(image_dir)
	# The guest runs the host's containerd, runc and images (cached).
	"$PODLINE_SCRIPTS/install-runtime.sh"
	mkdir -p "$VM_STATE"
	write_job "$driver" "$runtime" "$@"
	scratch_disk
	local start=$SECONDS rc=0
	log "booting the guest (cgroup $cgroup, driver $driver); console: $VM_STATE/console.log"
	boot "$dir" "root=/dev/vda rw console=ttyS0 quiet panic=-1 mitigations=off systemd.unified_cgroup_hierarchy=$unified $extra" || rc=$?
	((rc == 0)) || log "qemu exited $rc (see $VM_STATE/qemu.log)"
	if [[ ! -s $VM_STATE/job/rc ]]; then
		log "the guest left no exit status; its console's end:"
		tail -n 30 "$VM_STATE/console.log" >&2
		return 1
	fi
	rc=$(<"$VM_STATE/job/rc")
	log "guest run took $((SECONDS - start))s wall, command exited $rc"
	return "$rc"
}

# agent_flags DRIVER: the flags every e2e agent gets for the runtime's
# cgroup driver.
# ISSUE 31 §3: until podline has --cgroup-driver, only cgroupfs runs (runc's
# cgroupfs placement is what podline does today); with the flag, both
# drivers pass it and `make test-vm` runs the systemd driver too.
agent_flags() {
	if "$VM_STATE/bin/podline" --help 2>&1 | grep -q -- '--cgroup-driver'; then
		echo "--cgroup-driver=$1"
	elif [[ $1 == systemd ]]; then
		die "podline has no --cgroup-driver yet: only --driver cgroupfs can run"
	fi
}

cmd_test() {
	need_root "vm.sh test"
	local driver=$CGROUP_DRIVER run=$VM_E2E_RUN
	while (($#)); do
		case $1 in
		--driver) driver=$2; shift 2 ;;
		--all) run=.; shift ;;
		--) shift; break ;;
		*) usage ;;
		esac
	done
	lock
	mkdir -p "$VM_STATE/bin"
	log "building podline and the e2e tests for the guest"
	(cd "$REPO_ROOT" && go build -o "$VM_STATE/bin/podline" ./cmd/podline &&
		go test -c -tags e2e -o "$VM_STATE/bin/e2e.test" ./e2e/)
	local flags
	flags=$(agent_flags "$driver")
	# As scripts/e2e.sh runs them on the host: a TestCluster* test needs the
	# control plane, which the guest has not.
	cmd_run --driver "$driver" -- env -C "${VM_SHARES[podline]}/e2e" \
		PODLINE_E2E_PHASE=runtime PODLINE_E2E_PODLINE="${VM_SHARES[vmbin]}/podline" \
		PODLINE_E2E_AGENT_FLAGS="$flags" PODLINE_E2E_TIME_SCALE="$VM_E2E_TIME_SCALE" \
		"${VM_SHARES[vmbin]}/e2e.test" -test.v -test.count=1 -test.timeout=60m \
		-test.run "$run" -test.skip '^TestCluster' "$@"
}

cmd_status() {
	local dir
	dir=$VM_CACHE/$(image_key)
	if [[ -f $dir/root.img ]]; then
		echo "guest image: $dir ($(du -sh --apparent-size "$dir/root.img" | cut -f1) root, $(du -sh "$dir" | cut -f1) on disk)"
	else
		echo "guest image: not built (vm.sh image builds it into $dir)"
	fi
	if [[ -s $VM_STATE/job/rc ]]; then
		echo "last run: exit $(<"$VM_STATE/job/rc"); output $VM_STATE/out.log, console $VM_STATE/console.log"
	fi
}

# ---- inside the guest ----------------------------------------------------------

# cmd_guest is the guest's job (podline-vm-job.service): the runtime, then
# the host's command; its status goes back through the job share.
cmd_guest() {
	[[ -e $GUEST_PORT ]] && exec >"$GUEST_PORT" 2>&1
	# shellcheck source=/dev/null
	source "$GUEST_JOB/job.env"
	local rc=0
	log "guest up after $(cut -d' ' -f1 /proc/uptime)s: $(uname -r), $(stat -fc %T /sys/fs/cgroup)," \
		"controllers: $(cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null || echo v1), driver $VM_DRIVER"
	export PODLINE_CGROUP_DRIVER=$VM_DRIVER TMPDIR=$PODLINE_STATE/tmp
	mkdir -p "$TMPDIR"
	if ((VM_RUNTIME)); then
		# containerd in a unit of its own with Delegate=yes, as Debian's
		# containerd.service runs it: systemd then enables every controller
		# from the root down, as on the nodes podline is for, and the
		# systemd driver's scopes have a manager to ask.
		# Its output goes to the journal (the output port takes one writer).
		systemd-run --quiet --unit=podline-containerd --property=Type=oneshot \
			--property=RemainAfterExit=yes --property=Delegate=yes --property=KillMode=process \
			--setenv=PODLINE_CGROUP_DRIVER="$VM_DRIVER" --setenv=PODLINE_RUNTIME_INSTALL=0 \
			--setenv=PAUSE_IMAGE_TAR="$VM_PAUSE_TAR" --setenv=BUSYBOX_IMAGE_TAR="$VM_BUSYBOX_TAR" \
			"$PODLINE_SCRIPTS/runtime.sh" up || rc=$?
		journalctl --quiet --no-pager -o cat -u podline-containerd
		eval "$("$PODLINE_SCRIPTS/runtime.sh" env)"
		log "runtime up after $(cut -d' ' -f1 /proc/uptime)s"
	fi
	if ((rc == 0)); then
		(cd "$REPO_ROOT" && "${VM_CMD[@]}") || rc=$?
	fi
	log "command exited $rc after $(cut -d' ' -f1 /proc/uptime)s"
	echo "$rc" >"$GUEST_JOB/rc"
	sync
}

case ${1:-} in
image) cmd_image ;;
run) shift && cmd_run "$@" ;;
test) shift && cmd_test "$@" ;;
status) cmd_status ;;
guest) cmd_guest ;;
*) usage ;;
esac
