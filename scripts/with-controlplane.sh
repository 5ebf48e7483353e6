#!/usr/bin/env bash
# with-controlplane.sh CMD...: runs CMD with the test control plane up
# (controlplane.sh) and tells it where: PODLINE_ADMIN_KUBECONFIG (a
# system:masters kubeconfig), PODLINE_KUBECTL, PODLINE_CONTROLPLANE (the
# script, for node-kubeconfig and API server restarts) and
# PODLINE_NODE_MONITOR_GRACE_PERIOD. If this script had to start the control
# plane, it stops it afterwards whatever CMD returned; one someone already
# runs (`make cluster`) is left as it was.
#
# A control plane started here marks a silent node NotReady after 20 s
# (NODE_MONITOR_GRACE_PERIOD, default 40 s elsewhere) so the tests that stop
# podline wait less.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CP=$PODLINE_SCRIPTS/controlplane.sh
started=0
if ! "$CP" status >/dev/null 2>&1; then
	NODE_MONITOR_GRACE_PERIOD=${NODE_MONITOR_GRACE_PERIOD:-20s} "$CP" up
	started=1
fi
# Only the PODLINE_* names: KUBECONFIG and PATH of the caller stay as they were.
eval "$("$CP" env | grep '^export PODLINE_')"

rc=0
# Ctrl-C reaches CMD too; this script outlives it to stop what it started.
trap 'rc=130' INT
trap 'rc=143' TERM
"$@" || rc=$?
if ((started)); then
	"$CP" down
fi
exit "$rc"
