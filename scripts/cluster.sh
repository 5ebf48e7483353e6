#!/usr/bin/env bash
# cluster.sh up|down: a one-node Kubernetes cluster to try podline with
# (`make cluster`, `make cluster-down`). `up` starts the harness's containerd
# (runtime.sh), the control plane (controlplane.sh, with metrics-server for
# `kubectl top`) and podline (bin/podline, built by `make build`) as node
# $NODE_NAME (default: the hostname, lowercased), then prints the kubectl
# command that works against it. `down` stops all three and removes what
# podline made (pod directories, logs, cgroups). podline's log is
# $CP_DIR/logs/podline.log next to the control plane's.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REPO=$(cd "$PODLINE_SCRIPTS/.." && pwd)
CP=$PODLINE_SCRIPTS/controlplane.sh
CP_DIR=${PODLINE_CLUSTER:-/run/podline-cluster}
NODE_PID=$CP_DIR/run/podline.pid
NODE_LOG=$CP_DIR/logs/podline.log
# podline's data, apart from `make run`'s (agent.sh) so neither removes
# the other's.
NODE_STATE=$PODLINE_STATE/cluster-node
MANIFESTS=$NODE_STATE/manifests
NODE_ROOT=$NODE_STATE/root
NODE_POD_LOGS=$NODE_STATE/pod-logs
CGROUP_ROOT=/podline-cluster

node_name() {
	local n=${NODE_NAME:-$(hostname)}
	echo "${n,,}"
}

# node_pid prints the pid of our podline if it runs.
node_pid() { podline_pid "$NODE_PID"; }

# node_ready NAME KUBECTL: the Node's Ready condition is True.
node_ready() {
	[[ $("$2" --kubeconfig "$CP_DIR/admin.kubeconfig" get node "$1" \
		-o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
}

cmd_up() {
	need_root "cluster.sh up"
	local name kubeconfig kubectl pid ip serving
	name=$(node_name)
	[[ -x $REPO/bin/podline ]] || die "no $REPO/bin/podline: run make build (make cluster does)"
	# Two agents on one containerd would remove each other's pods.
	if podline_pid "$PODLINE_RUN/podline.pid" >/dev/null; then
		die "the podline of \`make run\` runs on the same containerd; \`make stop\` it first"
	fi
	"$PODLINE_SCRIPTS/runtime.sh" up
	"$CP" up
	kubeconfig=$("$CP" node-kubeconfig "$name")
	# The API server reaches the node's port 10250 (logs, exec,
	# port-forward) at its InternalIP: the source address of the default
	# route, as podline picks it.
	ip=$(ip -4 route get 192.0.2.1 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "src") print $(i + 1)}')
	mapfile -t serving < <("$CP" node-serving-cert "$name" 127.0.0.1 ${ip:+"$ip"})
	kubectl=$(<"$CP_DIR/kube-bin")/kubectl
	if pid=$(node_pid); then
		log "podline already runs as node $name (pid $pid)"
	else
		mkdir -p "$MANIFESTS" "$NODE_ROOT" "$NODE_POD_LOGS"
		log "starting podline as node $name (log: $NODE_LOG)"
		# setsid: podline must outlive this script and the shell that ran it.
		setsid "$REPO/bin/podline" \
			--kubeconfig "$kubeconfig" \
			--hostname-override "$name" \
			--container-runtime-endpoint "$CONTAINER_RUNTIME_ENDPOINT" \
			--pod-manifest-path "$MANIFESTS" \
			--root-dir "$NODE_ROOT" \
			--pod-logs-dir "$NODE_POD_LOGS" \
			--cgroup-root "$CGROUP_ROOT" \
			--tls-cert-file "${serving[0]}" --tls-private-key-file "${serving[1]}" \
			--client-ca-file "${serving[2]}" \
			</dev/null >>"$NODE_LOG" 2>&1 &
		echo $! >"$NODE_PID"
	fi
	local deadline=$((SECONDS + 90))
	until node_ready "$name" "$kubectl"; do
		node_pid >/dev/null || die "podline exited; see $NODE_LOG"
		((SECONDS < deadline)) || die "node $name not Ready after 90 s; see $NODE_LOG (\`make cluster-down\` stops it all)"
		sleep 0.5
	done
	cat <<MSG

A one-node cluster runs: the control plane on https://127.0.0.1:6443 and
podline (pid $(node_pid)) as node $name, on the harness's containerd.

  export KUBECONFIG=$CP_DIR/admin.kubeconfig
  $kubectl get nodes -o wide
  $kubectl create deployment hello --image=$BUSYBOX_IMAGE --replicas=3 -- sh -c 'while true; do date; sleep 5; done'
  $kubectl get pods -o wide
  $kubectl logs deployment/hello
  $kubectl exec deployment/hello -- sh -c 'echo hello from \$(hostname)'
  $kubectl top pod && $kubectl top node $name   # metrics-server; figures ~20 s after a pod starts

Or: eval "\$(scripts/controlplane.sh env)" puts kubectl in PATH and sets KUBECONFIG.
Images: only the local ones ($BUSYBOX_IMAGE, $PAUSE_IMAGE); no registry is reachable.
Logs: $NODE_LOG and $CP_DIR/logs/*.log (metrics-server's too). Static pods: $MANIFESTS.
\`make cluster-down\` stops podline, the control plane and containerd.
MSG
}

stop_node() {
	local pid
	if pid=$(node_pid); then
		stop_podline "$pid" 10
	fi
	rm -f "$NODE_PID"
}

# cleanup removes what podline made once the runtime is down: pod
# directories (tmpfs volumes unmounted first), container logs, pod cgroups.
cleanup() {
	remove_podline_leftovers "$NODE_ROOT" "$CGROUP_ROOT"
	rm -rf "${NODE_STATE:?}"
}

cmd_down() {
	need_root "cluster.sh down"
	stop_node
	"$CP" down
	"$PODLINE_SCRIPTS/runtime.sh" down
	cleanup
}

case ${1:-} in
up) cmd_up ;;
down) cmd_down ;;
*)
	echo "usage: $0 up|down" >&2
	exit 2
	;;
esac
