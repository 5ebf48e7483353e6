#!/usr/bin/env bash
# agent.sh start|stop: runs podline for `make run` against the harness's
# containerd, with the manifests from examples/, and stops it for
# `make stop`. podline's own data (pod directories, logs, cgroups) lives in
# places of the harness's own so stop can remove all of it.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REPO=$(cd "$PODLINE_SCRIPTS/.." && pwd)
AGENT_PID=$PODLINE_RUN/podline.pid
AGENT_LOG=$PODLINE_STATE/podline.log
MANIFESTS=$PODLINE_STATE/manifests
AGENT_ROOT=$PODLINE_STATE/podline-root
AGENT_LOGS=$PODLINE_STATE/pod-logs
CGROUP_ROOT=/podline-dev
READ_ONLY_PORT=${READ_ONLY_PORT:-10255}

agent_pid() { podline_pid "$AGENT_PID"; }

cmd_start() {
	need_root "agent.sh start"
	if pid=$(agent_pid); then
		log "podline already runs (pid $pid)"
		return
	fi
	mkdir -p "$MANIFESTS" "$PODLINE_RUN"
	cp "$REPO"/examples/*.yaml "$MANIFESTS"/
	log "starting podline (log: $AGENT_LOG, manifests: $MANIFESTS)"
	setsid "$REPO/bin/podline" \
		--container-runtime-endpoint "$CONTAINER_RUNTIME_ENDPOINT" \
		--pod-manifest-path "$MANIFESTS" \
		--root-dir "$AGENT_ROOT" \
		--pod-logs-dir "$AGENT_LOGS" \
		--cgroup-root "$CGROUP_ROOT" \
		--read-only-port "$READ_ONLY_PORT" --address 127.0.0.1 \
		</dev/null >>"$AGENT_LOG" 2>&1 &
	echo $! >"$AGENT_PID"
	local deadline=$((SECONDS + 60))
	until curl -fsS "localhost:$READ_ONLY_PORT/pods" 2>/dev/null | grep -q '"phase":"Running"'; do
		agent_pid >/dev/null || die "podline exited; see $AGENT_LOG"
		((SECONDS < deadline)) || die "no pod Running after 60s; see $AGENT_LOG"
		sleep 0.2
	done
	cat <<MSG

podline is running (pid $(agent_pid)) with the pods in $MANIFESTS:

  curl -s localhost:$READ_ONLY_PORT/pods | python3 -m json.tool    # pods and their status
  curl -s localhost:$READ_ONLY_PORT/spec/                          # machine info
  curl -s localhost:10248/healthz
  tail -f $AGENT_LOG                                           # podline's log
  ls $AGENT_LOGS                                               # container logs

Add or remove manifests in $MANIFESTS; \`make stop\` stops it all.
MSG
}

cmd_stop() {
	need_root "agent.sh stop"
	local pid
	if pid=$(agent_pid); then
		stop_podline "$pid" 5
	fi
	rm -f "$AGENT_PID"
}

# cleanup removes what podline made once the runtime is down: its pod
# directories (unmounting tmpfs volumes first), logs and pod cgroups.
cmd_cleanup() {
	remove_podline_leftovers "$AGENT_ROOT" "$CGROUP_ROOT"
	if [[ -d $AGENT_ROOT ]]; then
		rm -rf "${AGENT_ROOT:?}" "${AGENT_LOGS:?}"
	fi
}

case ${1:-} in
start) cmd_start ;;
stop) cmd_stop ;;
cleanup) cmd_cleanup ;;
*)
	echo "usage: $0 start|stop|cleanup" >&2
	exit 2
	;;
esac
