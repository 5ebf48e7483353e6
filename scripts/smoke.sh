#!/usr/bin/env bash
# smoke.sh: proves a running harness (`runtime.sh up`) can run real pods:
#   1. a host-network busybox pod whose container's log says "hello"
#   2. a pod on the CNI bridge that gets an address in $CNI_SUBNET
#   3. both stopped and removed again, leaving no pod behind
# Exits non-zero on the first failure. Uses only our own pod names.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root smoke.sh
containerd_answers || die "containerd does not answer: run scripts/runtime.sh up"

WORK=$(mktemp -d)
PODS=()
cleanup() {
	local p
	for p in "${PODS[@]}"; do pcrictl rmp -f "$p" >/dev/null 2>&1 || true; done
	rm -rf "$WORK"
}
trap cleanup EXIT

# pod_json NAME HOSTNET: a pod config; host-network pods get no hostname
# (runc cannot set one without a private UTS namespace).
# On the systemd cgroup driver runc wants the parent as a slice; without
# one containerd passes a path and runc refuses the sandbox.
pod_json() {
	local name=$1 hostnet=$2 ns='{}' hostname='' parent=''
	if ((hostnet)); then ns='{"network": 2}'; else hostname="\"hostname\": \"$name\","; fi
	[[ $CGROUP_DRIVER == systemd ]] && parent='"cgroup_parent": "podline.slice", '
	cat <<JSON
{"metadata": {"name": "$name", "namespace": "podline-smoke", "uid": "podline-smoke-$name"},
 $hostname "log_directory": "$WORK/logs/$name",
 "linux": {$parent"security_context": {"namespace_options": $ns}}}
JSON
}

ctr_json() {
	cat <<JSON
{"metadata": {"name": "$1"}, "image": {"image": "$BUSYBOX_IMAGE"},
 "command": ["sh", "-c", "$2"], "log_path": "$1.log", "linux": {}}
JSON
}

# run_pod NAME HOSTNET SCRIPT: starts a pod with one container and appends
# its id to PODS (not printed: a $(...) subshell would lose PODS).
run_pod() {
	local name=$1 pod ctr
	pod_json "$name" "$2" >"$WORK/$name-pod.json"
	ctr_json "$name" "$3" >"$WORK/$name-ctr.json"
	pod=$(pcrictl runp "$WORK/$name-pod.json" 2>/dev/null)
	PODS+=("$pod")
	ctr=$(pcrictl create --no-pull "$pod" "$WORK/$name-ctr.json" "$WORK/$name-pod.json" 2>/dev/null)
	pcrictl start "$ctr" >/dev/null
}

in_subnet() {
	local ip=$1 net=${CNI_SUBNET%/*} bits=${CNI_SUBNET#*/} a b c d n1 n2 n3 n4
	IFS=. read -r a b c d <<<"$ip"
	IFS=. read -r n1 n2 n3 n4 <<<"$net"
	local x=$(((a << 24) | (b << 16) | (c << 8) | d)) y=$(((n1 << 24) | (n2 << 16) | (n3 << 8) | n4))
	local mask=$(((0xffffffff << (32 - bits)) & 0xffffffff))
	(((x & mask) == (y & mask)))
}

run_pod hostnet 1 'echo hello; sleep 3600'
for _ in $(seq 50); do
	grep -q hello "$WORK/logs/hostnet/hostnet.log" 2>/dev/null && break
	sleep 0.1
done
grep -q 'stdout F hello' "$WORK/logs/hostnet/hostnet.log" || die "host-network pod: no hello in its log"
log "ok: host-network pod logged hello"

run_pod bridged 0 'sleep 3600'
ip=$(pcrictl inspectp -o go-template --template '{{.status.network.ip}}' "${PODS[1]}")
in_subnet "$ip" || die "bridged pod: address '$ip' not in $CNI_SUBNET"
log "ok: bridged pod got $ip on $CNI_BRIDGE"

for pod in "${PODS[@]}"; do
	pcrictl stopp "$pod" >/dev/null
	pcrictl rmp "$pod" >/dev/null
done
PODS=()
left=$(pcrictl pods -q --namespace podline-smoke)
[[ -z $left ]] || die "pods left after removal: $left"
log "ok: both pods stopped and removed"
