#!/usr/bin/env bash
# install-metrics-server.sh: builds metrics-server (sigs.k8s.io/metrics-server)
# from the Go module proxy into $METRICS_SERVER_BIN, outside the repository,
# next to install-kube.sh's binaries. controlplane.sh runs it as a host
# process so that `kubectl top` works against podline.
#
#   install-metrics-server.sh
#
# It prints the path of the binary on stdout when done; progress goes to
# stderr. Idempotent: a stamp makes a second run return at once. A cold build
# takes a few minutes on 2 cores (~100 module zips; Go's build cache stays in
# $(go env GOCACHE)).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

METRICS_SERVER_VERSION=${METRICS_SERVER_VERSION:-v0.8.0}
METRICS_SERVER_CACHE=$PODLINE_CACHE/metrics-server/$METRICS_SERVER_VERSION
METRICS_SERVER_BIN=$METRICS_SERVER_CACHE/bin
METRICS_SERVER_PKG=sigs.k8s.io/metrics-server/cmd/metrics-server
STAMP=$METRICS_SERVER_CACHE/stamp

case ${1:-} in
"") ;;
*)
	sed -n '2,12s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
	;;
esac

fresh() { [[ -f $STAMP && -x $METRICS_SERVER_BIN/metrics-server ]]; }

if fresh; then
	echo "$METRICS_SERVER_BIN/metrics-server"
	exit 0
fi
command -v go >/dev/null || die "go not found (expected /usr/local/go/bin)"
mkdir -p "$METRICS_SERVER_BIN"
exec 9>"$METRICS_SERVER_CACHE/.install.lock"
flock 9
if ! fresh; then
	start=$(date +%s)
	log "building metrics-server $METRICS_SERVER_VERSION ($METRICS_SERVER_PKG; a cold build takes minutes)"
	# go install of a module version (its own go.mod has no replaces), into a
	# scratch GOBIN so a failed build leaves no binary behind. Static and
	# stamped with its version like upstream's Makefile does it (it reports
	# through client-go's version package).
	tmp=$(mktemp -d "$METRICS_SERVER_CACHE/gobin.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	(cd / && GOBIN=$tmp CGO_ENABLED=0 GOFLAGS=-buildvcs=false go install -trimpath \
		-ldflags "-s -w -X k8s.io/client-go/pkg/version.gitVersion=$METRICS_SERVER_VERSION" \
		"$METRICS_SERVER_PKG@$METRICS_SERVER_VERSION") ||
		die "go install $METRICS_SERVER_PKG@$METRICS_SERVER_VERSION failed"
	mv "$tmp/metrics-server" "$METRICS_SERVER_BIN/metrics-server"
	printf '%s %s\n' "$METRICS_SERVER_VERSION" "$METRICS_SERVER_PKG" >"$STAMP"
	log "built metrics-server in $(($(date +%s) - start)) s"
fi
echo "$METRICS_SERVER_BIN/metrics-server"
