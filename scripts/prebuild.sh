#!/usr/bin/env bash
# prebuild.sh: starts, in the background and at the lowest CPU priority, the
# builds the end-to-end tests will wait for: containerd, runc and crictl, the
# image registry, the control plane and metrics-server. `make test` runs it
# first, so that on a fresh machine these builds use the CPU that vet and
# the unit tests leave idle (a third of it on 2 cores) instead of starting
# after them.
#
# Each install script holds its own lock: the foreground call that needs a
# component later waits for the background one and then finds it built. A
# background failure is only logged here; the foreground call tries again
# and fails loudly. On a warm machine every script returns at once.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root prebuild.sh
mkdir -p "$PODLINE_CACHE"
out=$PODLINE_CACHE/prebuild.log
{
	date
	# One at a time: on 2 cores, two cold builds at once only fight for
	# memory and the build cache's lock. Most needed first.
	for s in install-runtime.sh install-registry.sh "install-kube.sh control-plane" install-metrics-server.sh; do
		# shellcheck disable=SC2086 # the component list is meant to split
		if ! nice -n 19 "$PODLINE_SCRIPTS"/$s >/dev/null; then
			echo "prebuild: $s failed (its foreground call will try again)"
		fi
	done
	date
} >"$out" 2>&1 </dev/null &
disown
log "building the e2e components in the background (log: $out)"
