#!/usr/bin/env bash
# install-kube.sh: builds upstream Kubernetes binaries from the Go module proxy
# into $KUBE_BIN (outside the repository): the kubelet that bench/ runs side
# by side with podline, and the control plane that cluster tests talk to.
#
#   install-kube.sh [--if-built] [component|group ...]   (default: kubelet)
#
# --if-built builds nothing: it prints the bin dir when every component is
# already built, and otherwise exits 3 (what `make bench-quick` uses, so a
# smoke run never waits minutes for a kubelet build).
# Components: kubelet kube-apiserver kube-scheduler kube-controller-manager
# kubectl etcd. Groups: control-plane (the last five), all.
# It prints the bin dir on stdout when done; progress goes to stderr.
#
# k8s.io/kubernetes cannot be `go install`ed: its go.mod replaces the staging
# modules (k8s.io/api, k8s.io/client-go, ...) with paths inside its own tree.
# So a wrapper module is generated under $KUBE_CACHE that requires
# k8s.io/kubernetes and points each of those replaces at the published
# v0.X.Y release of the same module. Idempotent: a stamp per component makes a
# second run return at once. Go's build cache (~3 GB for everything) stays in
# $(go env GOCACHE), outside the repository like the binaries.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The release go.mod's k8s.io/* v0.36.x modules belong to.
KUBE_VERSION=${KUBE_VERSION:-v1.36.3}
KUBE_CACHE=$PODLINE_CACHE/kube/$KUBE_VERSION
KUBE_BIN=$KUBE_CACHE/bin
KUBE_MODULE=$KUBE_CACHE/module
KUBE_STAMPS=$KUBE_CACHE/stamps

CONTROL_PLANE=(kube-apiserver kube-scheduler kube-controller-manager kubectl etcd)

# Go package of each component; etcd's version is the one Kubernetes pins.
declare -A KUBE_PKGS=(
	[kubelet]=k8s.io/kubernetes/cmd/kubelet
	[kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
	[kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
	[kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
	[kubectl]=k8s.io/kubernetes/cmd/kubectl
	[etcd]=go.etcd.io/etcd/server/v3
)

usage() {
	sed -n '2,14s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

# expand sets COMPS to the components the arguments name, in order and
# without repeats.
COMPS=()
expand() {
	local -A seen=()
	local arg c
	local -a out=()
	for arg in "$@"; do
		case $arg in
		control-plane) out+=("${CONTROL_PLANE[@]}") ;;
		all) out+=(kubelet "${CONTROL_PLANE[@]}") ;;
		-h | --help) usage ;;
		*)
			[[ -n ${KUBE_PKGS[$arg]+x} ]] ||
				die "unknown component $arg (want: kubelet ${CONTROL_PLANE[*]}, control-plane or all)"
			out+=("$arg")
			;;
		esac
	done
	for c in "${out[@]}"; do
		[[ -n ${seen[$c]+x} ]] && continue
		seen[$c]=1
		COMPS+=("$c")
	done
}

# fresh is true when COMPONENT has a stamp for this version and its binary.
fresh() {
	[[ -f $KUBE_STAMPS/$1 && -x $KUBE_BIN/$1 ]]
}

# write_module generates the wrapper module: k8s.io/kubernetes at
# $KUBE_VERSION plus, for every replace in its go.mod, the same replace with a
# local path swapped for the published staging release (v1.36.3 -> v0.36.3).
write_module() {
	local gomod staging=v0${KUBE_VERSION#v1}
	[[ -f $KUBE_MODULE/go.mod && -f $KUBE_MODULE/.complete ]] && return 0
	log "generating the wrapper module in $KUBE_MODULE"
	rm -rf "$KUBE_MODULE"
	mkdir -p "$KUBE_MODULE"
	gomod=$(cd / && go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" |
		sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
	[[ -f $gomod ]] || die "no go.mod for k8s.io/kubernetes@$KUBE_VERSION from the module proxy"
	{
		printf 'module podline.local/kube\n\ngo %s\n\n' "$(sed -n 's/^go //p' "$gomod")"
		# The main module's godebug settings pick the binaries' runtime
		# behaviour; keep upstream's (e.g. `godebug default=go1.26`).
		awk '/^godebug \($/, /^\)$/ { print; next } /^godebug / { print }' "$gomod"
		echo
		printf 'require k8s.io/kubernetes %s\n\nreplace (\n' "$KUBE_VERSION"
		# Lines look like `k8s.io/api => ./staging/src/k8s.io/api`. The
		# sample-* modules are never published; nothing we build needs them.
		awk -v v="$staging" '
			/^replace \($/ { in_r = 1; next }
			in_r && /^\)$/ { in_r = 0; next }
			in_r && $2 == "=>" {
				if ($1 ~ /^k8s\.io\/sample-/) next
				if ($3 ~ /^\.\.?\//) printf "\t%s => %s %s\n", $1, $1, v
				else print
			}' "$gomod"
		printf ')\n'
	} >"$KUBE_MODULE/go.mod"
	# go.sum is filled in by the first build (-mod=mod). Nothing is added at
	# "latest": every module a component needs is already in the release's
	# pruned requirement graph, etcd included.
	touch "$KUBE_MODULE/.complete"
}

# ldflags prints the version stamps upstream's build sets, so that binaries
# report $KUBE_VERSION instead of v0.0.0. The build date is the release's
# publication time from the proxy, so rebuilds are reproducible.
ldflags() {
	local major minor date info
	major=${KUBE_VERSION#v}
	major=${major%%.*}
	minor=${KUBE_VERSION#v*.}
	minor=${minor%%.*}
	info=$(cd / && go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" |
		sed -n 's/^[[:space:]]*"Info": "\(.*\)",$/\1/p')
	date=$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$info")
	local p flags="-s -w"
	for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		flags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=$major -X $p.gitMinor=$minor"
		flags+=" -X $p.gitTreeState=clean -X $p.buildDate=${date:-1970-01-01T00:00:00Z}"
	done
	echo "$flags"
}

# build COMPONENT compiles one binary into $KUBE_BIN and stamps it. Static
# (CGO_ENABLED=0) like upstream's control plane. For the kubelet, which
# upstream links with cgo, that changes only how user and host names are
# looked up: Go's resolver instead of glibc's, alike for files and DNS.
build() {
	local c=$1 pkg=${KUBE_PKGS[$1]} start
	start=$(date +%s)
	log "building $c for Kubernetes $KUBE_VERSION ($pkg; a cold build takes minutes)"
	rm -f "$KUBE_STAMPS/$c"
	(cd "$KUBE_MODULE" && CGO_ENABLED=0 GOFLAGS='-mod=mod -buildvcs=false' \
		go build -trimpath -ldflags "$(ldflags)" -o "$KUBE_BIN/$c.tmp" "$pkg")
	mv "$KUBE_BIN/$c.tmp" "$KUBE_BIN/$c"
	printf '%s %s\n' "$KUBE_VERSION" "$pkg" >"$KUBE_STAMPS/$c"
	log "built $c in $(($(date +%s) - start)) s"
}

main() {
	local if_built=0
	if [[ ${1:-} == --if-built ]]; then
		if_built=1
		shift
	fi
	command -v go >/dev/null || die "go not found (expected /usr/local/go/bin)"
	expand "${@:-kubelet}"

	local -a todo=()
	local c
	for c in "${COMPS[@]}"; do fresh "$c" || todo+=("$c"); done
	if ((${#todo[@]} == 0)); then
		echo "$KUBE_BIN"
		return 0
	fi
	if ((if_built)); then
		log "not built yet: ${todo[*]} (install-kube.sh ${todo[*]} builds them)"
		exit 3
	fi

	mkdir -p "$KUBE_BIN" "$KUBE_STAMPS"
	exec 9>"$KUBE_CACHE/.install.lock"
	flock 9
	write_module
	for c in "${todo[@]}"; do
		fresh "$c" || build "$c"
	done
	echo "$KUBE_BIN"
}

main "$@"
