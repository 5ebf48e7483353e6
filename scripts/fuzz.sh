#!/usr/bin/env bash
# fuzz.sh FUZZTIME: runs every Go fuzz target of the module for FUZZTIME
# each, one after the other (go test -fuzz takes one target of one package
# at a time), and prints a table of executions per target. The targets are
# read from the source, so a new func FuzzXxx is picked up by itself.
#
#   scripts/fuzz.sh 3s      # make test-fuzz
#   scripts/fuzz.sh 5m      # make fuzz
#
# A crash fails the run; go test writes the input under the package's
# testdata/fuzz/FuzzXxx/, where it stays as a regression seed once fixed.
# FUZZ_MATCH restricts the targets to those whose "pkg.FuzzName" matches
# the extended regular expression.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime=${1:?usage: scripts/fuzz.sh FUZZTIME}
go=${GO:-go}
match=${FUZZ_MATCH:-.}

# "dir name" per target, sorted: every func FuzzXxx(f *testing.F) in a
# test file of this module (bench/ is a module of its own).
targets=$(grep -R --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . \
	| grep -v '^\./bench/' \
	| sed -E 's|^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*|\1 \2|' \
	| sort -u | awk -v m="$match" '($1 "." $2) ~ m')
if [[ -z $targets ]]; then
	echo "fuzz.sh: no fuzz targets match $match" >&2
	exit 1
fi

logdir=$(mktemp -d)
trap 'rm -rf "$logdir"' EXIT
summary=()
failed=0
while read -r dir name; do
	log=$logdir/${dir//\//_}.$name.log
	echo "== $dir $name ($fuzztime)"
	status=ok
	if ! "$go" test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "./$dir/" >"$log" 2>&1; then
		status=FAIL
		failed=1
		grep -v 'disable exposing PSI metrics' "$log" | tail -30
	fi
	# The last progress line has the total: "fuzz: elapsed: 2m0s, execs: 123 (1/sec), ..."
	# A run shorter than the first progress report prints none.
	execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | awk '{print $2}' || true)
	summary+=("$(printf '%-36s %-14s %12s  %s' "$name" "$dir" "${execs:-0}" "$status")")
done <<<"$targets"

printf '\n%-36s %-14s %12s  %s\n' target package executions result
printf '%s\n' "${summary[@]}"
exit $failed
