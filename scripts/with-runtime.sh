#!/usr/bin/env bash
# with-runtime.sh CMD...: runs CMD with the harness's containerd up. If this
# script had to start it, it stops it again afterwards (whatever CMD
# returned), so `make test` leaves no containerd behind; a runtime someone
# already runs (`make run`) is left as it was.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

started=0
if ! "$PODLINE_SCRIPTS/runtime.sh" status >/dev/null 2>&1; then
	"$PODLINE_SCRIPTS/runtime.sh" up
	started=1
fi
rc=0
# Ctrl-C reaches CMD too; this script outlives it to stop what it started.
trap 'rc=130' INT
trap 'rc=143' TERM
"$@" || rc=$?
if ((started)); then
	"$PODLINE_SCRIPTS/runtime.sh" down
fi
exit "$rc"
