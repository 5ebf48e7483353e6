#!/usr/bin/env bash
# vulncheck.sh: govulncheck over podline's module (./...): the known
# vulnerabilities of the Go standard library and the dependencies that
# podline's code can actually reach.
#
# govulncheck is built from the Go module proxy into the cache (pinned,
# stamped per version, like the runtime's binaries). It needs its
# vulnerability database: https://vuln.go.dev, or a copy named by
# GOVULNDB (a URL or file:///path, as govulncheck's -db takes it). Where
# vuln.go.dev cannot be reached and GOVULNDB is not given, the database is
# made from the reports the Go module proxy serves (golang.org/x/vulndb),
# cached under $PODLINE_CACHE/vulndb.
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
# The reports behind vuln.go.dev, as the Go module proxy serves them: the
# database when vuln.go.dev itself cannot be reached (pinned; raise it to
# see newer reports).
VULNDB_VERSION=${VULNDB_VERSION:-v0.0.0-20261105234957-e22db6528018}
db_given=${GOVULNDB:+1}
GOVULNDB=${GOVULNDB:-https://vuln.go.dev}
# Per Go version too: govulncheck loads the packages with the Go it was
# built with, and one older than the toolchain refuses newer sources.
bin_dir=$PODLINE_CACHE/govulncheck/$GOVULNCHECK_VERSION-$(go env GOVERSION)/bin
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
# proxy_db lays golang.org/x/vulndb@VULNDB_VERSION's reports out as a
# database under the cache (scripts/vulndb) and points GOVULNDB at it.
proxy_db() {
	local dir=$PODLINE_CACHE/vulndb/$VULNDB_VERSION src stamp
	if [[ ! -f $dir/index/db.json ]]; then
		src=$(cd / && go mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" 2>/dev/null |
			sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || return 1
		[[ -n $src && -d $src/data/osv ]] || return 1
		# A pseudo-version's time stands for the reports' own, which the
		# repository leaves empty.
		stamp=$(sed -E 's/^v[0-9.]+-([0-9]{4})([0-9]{2})([0-9]{2})([0-9]{2})([0-9]{2})([0-9]{2})-.*/\1-\2-\3T\4:\5:\6Z/' <<<"$VULNDB_VERSION")
		rm -rf "$dir.tmp"
		(cd "$PODLINE_SCRIPTS/.." && go run ./scripts/vulndb -osv "$src/data/osv" -out "$dir.tmp" -modified "$stamp") >&2 || return 1
		rm -rf "$dir" && mv "$dir.tmp" "$dir"
	fi
	GOVULNDB=file://$dir
}
if ! db_reachable && [[ -z $db_given ]]; then
	log "$GOVULNDB cannot be reached; using golang.org/x/vulndb@$VULNDB_VERSION from the Go module proxy"
	proxy_db || log "cannot fetch golang.org/x/vulndb@$VULNDB_VERSION either"
fi
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
