#!/usr/bin/env bash
# install-registry.sh: installs what the tests' image registry needs: the
# CNCF distribution registry, built from the Go module proxy into
# $PODLINE_CACHE/bin/registry, and Debian's apache2-utils for htpasswd (the
# registry's htpasswd auth reads bcrypt only). Idempotent: a stamp per
# version makes a second run return at once.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root install-registry.sh

# Checked against the Go module proxy; ~3 minutes cold on 2 cores.
REGISTRY_VERSION=${REGISTRY_VERSION:-v3.1.2}

install_htpasswd() {
	command -v htpasswd >/dev/null && return 0
	apt_install apache2-utils
}

build_registry() {
	local stamp=$PODLINE_CACHE/stamps/registry-$REGISTRY_VERSION
	[[ -f $stamp && -x $PODLINE_BIN/registry ]] && return 0
	log "building registry $REGISTRY_VERSION (a cold build takes minutes)"
	rm -f "$PODLINE_CACHE/stamps/registry-"*
	# Outside any module, so the repository's go.mod plays no part.
	(cd / && GOBIN=$PODLINE_BIN GOFLAGS=-buildvcs=false go install \
		-ldflags "-X github.com/distribution/distribution/v3/version.version=$REGISTRY_VERSION" \
		"github.com/distribution/distribution/v3/cmd/registry@$REGISTRY_VERSION")
	[[ -x $PODLINE_BIN/registry ]] || die "registry missing after the build"
	echo "$REGISTRY_VERSION" >"$stamp"
}

main() {
	command -v go >/dev/null || die "go not found (expected /usr/local/go/bin)"
	mkdir -p "$PODLINE_BIN" "$PODLINE_CACHE/stamps"
	exec 9>"$PODLINE_CACHE/.install-registry.lock"
	flock 9
	install_htpasswd
	build_registry
}

main "$@"
