#!/usr/bin/env bash
# with-registry.sh CMD...: runs CMD with the tests' image registry up
# (registry.sh) and tells it where: PODLINE_REGISTRY (host:port),
# PODLINE_REGISTRY_USER, PODLINE_REGISTRY_PASSWORD, PODLINE_REGISTRY_CA,
# PODLINE_REGISTRY_BUSYBOX (the private busybox repository),
# PODLINE_REGISTRY_BUSYBOX_DIGEST and PODLINE_REGISTRY_LOG (its log, with
# a line per request). If this script had to start the
# registry, it stops it afterwards whatever CMD returned; one that already
# runs is left as it was. Run it inside with-runtime.sh: containerd's
# config must name the hosts dir the registry's CA is written to.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

REG=$PODLINE_SCRIPTS/registry.sh
started=0
if ! "$REG" status >/dev/null 2>&1; then
	"$REG" up
	started=1
fi
eval "$("$REG" env)"

rc=0
# Ctrl-C reaches CMD too; this script outlives it to stop what it started.
trap 'rc=130' INT
trap 'rc=143' TERM
"$@" || rc=$?
if ((started)); then
	"$REG" down
fi
exit "$rc"
