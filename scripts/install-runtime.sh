#!/usr/bin/env bash
# install-runtime.sh: installs what podline's real runtime needs: Debian
# packages (CNI plugins, busybox-static for the test image, libseccomp for
# runc, iptables for the CNI bridge) and containerd v2, runc and crictl built
# from the Go module proxy into $PODLINE_CACHE/bin. Idempotent: a stamp per
# tool and version makes a second run return at once.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root install-runtime.sh

# Debian packages and why:
#   gcc libc6-dev libseccomp-dev pkg-config  runc is cgo (nsenter, seccomp)
#   containernetworking-plugins              bridge, host-local, portmap, loopback
#   iptables                                 the bridge's masquerade and portmap
#   iproute2                                 `down` removes our bridge
#   busybox-static                           the busybox test image's only binary
#   util-linux                               mount/umount/findmnt in `down`
#   curl                                     `make run` waits on podline's /pods
APT_PACKAGES=(gcc libc6-dev libseccomp-dev pkg-config containernetworking-plugins
	iptables iproute2 busybox-static util-linux curl)

apt_missing() {
	local p
	for p in "${APT_PACKAGES[@]}"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			echo "$p"
	done
}

install_apt() {
	local missing
	mapfile -t missing < <(apt_missing)
	((${#missing[@]} == 0)) && return 0
	apt_install "${missing[@]}"
}

# The binaries each stamped build must leave in $PODLINE_BIN.
declare -A GO_BINS=(
	[containerd]="containerd containerd-shim-runc-v2 ctr"
	[runc]="runc"
	[crictl]="crictl"
)

# stamped NAME VERSION BUILDER [args...]: runs BUILDER args... to put NAME's
# binaries into $PODLINE_BIN unless the stamp for NAME@VERSION and every
# binary already exist.
stamped() {
	local name=$1 version=$2 stamp bin
	shift 2
	stamp=$PODLINE_CACHE/stamps/$name-$version
	local -a bins
	read -r -a bins <<<"${GO_BINS[$name]}"
	if [[ -f $stamp ]]; then
		local ok=1
		for bin in "${bins[@]}"; do [[ -x $PODLINE_BIN/$bin ]] || ok=0; done
		((ok)) && return 0
	fi
	log "building $name $version (a cold build takes minutes)"
	rm -f "$PODLINE_CACHE/stamps/$name-"*
	"$@"
	for bin in "${bins[@]}"; do
		[[ -x $PODLINE_BIN/$bin ]] || die "$name: $bin missing after the build"
	done
	echo "$version" >"$stamp"
}

# go_install runs `go install` outside any module so the repo's go.mod plays
# no part.
go_install() {
	(cd / && GOBIN=$PODLINE_BIN GOFLAGS=-buildvcs=false go install "$@")
}

# build_crictl builds crictl inside a throwaway module: `go install
# crictl@version` fails because it looks up the module's deprecation in the
# proxy's version list, which the proxy refuses for cri-tools.
build_crictl() {
	local mod
	mod=$(mktemp -d)
	printf 'module podline.local/crictl\n\ngo 1.26\n\nrequire sigs.k8s.io/cri-tools %s\n' \
		"$CRICTL_VERSION" >"$mod/go.mod"
	(cd "$mod" && GOFLAGS='-mod=mod -buildvcs=false' go build -trimpath -o "$PODLINE_BIN/crictl" \
		-ldflags "-X sigs.k8s.io/cri-tools/pkg/version.Version=$CRICTL_VERSION" \
		sigs.k8s.io/cri-tools/cmd/crictl)
	rm -rf "$mod"
}

main() {
	command -v go >/dev/null || die "go not found (expected /usr/local/go/bin)"
	mkdir -p "$PODLINE_BIN" "$PODLINE_CACHE/stamps"
	exec 9>"$PODLINE_CACHE/.install.lock"
	flock 9

	install_apt

	local cmd=github.com/containerd/containerd/v2/cmd
	stamped containerd "$CONTAINERD_VERSION" go_install \
		-ldflags "-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
		"$cmd/containerd@$CONTAINERD_VERSION" \
		"$cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION" \
		"$cmd/ctr@$CONTAINERD_VERSION"
	stamped runc "$RUNC_VERSION" go_install -tags seccomp \
		-ldflags "-X main.version=${RUNC_VERSION#v}" \
		"github.com/opencontainers/runc@$RUNC_VERSION"
	stamped crictl "$CRICTL_VERSION" build_crictl
}

main "$@"
