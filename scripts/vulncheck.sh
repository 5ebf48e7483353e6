#!/usr/bin/env bash
# vulncheck.sh: govulncheck over podline's module (./...): the known
# vulnerabilities of the Go standard library and the dependencies that
# podline's code can actually reach.
#
# govulncheck is built from the Go module proxy into the cache (pinned,
# stamped per version, like the runtime's binaries). It needs its
# vulnerability database: https://vuln.go.dev, or a copy named by
# GOVULNDB (a URL or file:///path, as govulncheck's -db takes it).
#
# Exit status:
#   0  no vulnerability reachable from podline's code, or the database could
#      not be reached (a loud NOT CHECKED line says so: a machine without the
#      network must still be able to lint, and a skip must not read as a pass)
#   1  govulncheck itself failed
#   2  the database could not be reached and VULNCHECK_REQUIRE_DB=1 (release
#      checks: no network is then a failure, not a skip)
#   3  findings: govulncheck's own code for "vulnerabilities found"
set -euo pipefail

# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

GOVULNCHECK_VERSION=${GOVULNCHECK_VERSION:-v1.9.0}
GOVULNDB=${GOVULNDB:-https://vuln.go.dev}
bin_dir=$PODLINE_CACHE/govulncheck/$GOVULNCHECK_VERSION/bin
govulncheck=$bin_dir/govulncheck

if [[ ! -x $govulncheck ]]; then
	log "building govulncheck $GOVULNCHECK_VERSION into $bin_dir"
	mkdir -p "$bin_dir"
	GOBIN=$bin_dir go install "golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION"
fi

# Reachability first, so "no database" is told apart from a failed scan.
db_reachable() {
	case $GOVULNDB in
	file://*) [[ -f ${GOVULNDB#file://}/index/db.json ]] ;;
	*) curl -fsS --max-time 15 -o /dev/null "$GOVULNDB/index/db.json" 2>/dev/null ;;
	esac
}
if ! db_reachable; then
	log "NOT CHECKED: the vulnerability database $GOVULNDB cannot be reached from this machine."
	log "Give a reachable copy with GOVULNDB=file:///path (or a mirror URL) to check."
	[[ ${VULNCHECK_REQUIRE_DB:-0} == 1 ]] && exit 2
	exit 0
fi

cd "$PODLINE_SCRIPTS/.."
log "govulncheck $GOVULNCHECK_VERSION against $GOVULNDB"
rc=0
"$govulncheck" -db "$GOVULNDB" ./... || rc=$?
case $rc in
0) log "no known vulnerability reachable from podline's code" ;;
3) log "vulnerabilities found: upgrade the module govulncheck names (within the k8s.io release line), or record why it does not apply in SECURITY.md" ;;
*) log "govulncheck failed (exit $rc)"; rc=1 ;;
esac
exit "$rc"
