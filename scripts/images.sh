#!/usr/bin/env bash
# images.sh [build|import]: builds podline's two local images and, with
# `import` (the default), loads them into our containerd's k8s.io namespace:
#   registry.k8s.io/pause:3.10   the sandbox image (scripts/pause, static Go)
#   docker.io/library/busybox:<debian version>, :<major.minor>, :1.36, :latest
#                                Debian's busybox-static with its applets
# No registry can be reached, so both are written as OCI layout tars by
# scripts/ociimage. The tars are cached under $PODLINE_CACHE/images by a hash
# of every input, so a warm run builds nothing and skips an import whose
# digest containerd already has. PAUSE_IMAGE_TAR and BUSYBOX_IMAGE_TAR name
# tars built before (with their .digest beside them) to import instead:
# vm.sh's guest has no Go and imports the host's.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

IMAGES_DIR=$PODLINE_CACHE/images
REPO_ROOT=$(cd "$PODLINE_SCRIPTS/.." && pwd)

# input_hash FILE...: a short hash of the Go version and the files' contents
# (not their paths, so another checkout of the repo hits the same cache).
input_hash() {
	local f
	{
		go env GOVERSION
		for f in "$@"; do sha256sum <"$f"; done
	} | sha256sum | cut -c1-16
}

# prune_except DIR PREFIX KEEP: drops older builds of the same thing.
prune_except() {
	find "$1" -maxdepth 1 -name "$2*" ! -name "$(basename "$3")*" -delete
}

go_sources() { find "$1" -maxdepth 1 -name '*.go' ! -name '*_test.go' | sort; }

# ociimage_tool prints the path of the image writer, building it if needed.
ociimage_tool() {
	local -a srcs
	mapfile -t srcs < <(go_sources "$PODLINE_SCRIPTS/ociimage")
	local tool
	tool=$PODLINE_CACHE/tools/ociimage-$(input_hash "${srcs[@]}")
	if [[ ! -x $tool ]]; then
		mkdir -p "$PODLINE_CACHE/tools"
		(cd "$REPO_ROOT" && CGO_ENABLED=0 go build -trimpath -buildvcs=false \
			-o "$tool.tmp" ./scripts/ociimage)
		prune_except "$PODLINE_CACHE/tools" ociimage- "$tool"
		mv "$tool.tmp" "$tool"
	fi
	echo "$tool"
}

# build_pause prints the path of the cached pause image tar.
build_pause() {
	if [[ -n ${PAUSE_IMAGE_TAR:-} ]]; then
		echo "$PAUSE_IMAGE_TAR"
		return
	fi
	local -a srcs
	mapfile -t srcs < <(go_sources "$PODLINE_SCRIPTS/pause"; go_sources "$PODLINE_SCRIPTS/ociimage")
	local tar
	tar=$IMAGES_DIR/pause-$(input_hash "${srcs[@]}").tar
	if [[ ! -s $tar || ! -s $tar.digest ]]; then
		log "building image $PAUSE_IMAGE"
		local work
		work=$(mktemp -d)
		# -trimpath, no VCS stamp and an empty build id make the binary, and so
		# the image digest, depend only on the source and the Go version.
		(cd "$REPO_ROOT" && CGO_ENABLED=0 go build -trimpath -buildvcs=false \
			-ldflags='-s -w -buildid=' -o "$work/pause" ./scripts/pause)
		"$(ociimage_tool)" -out "$tar" -ref "$PAUSE_IMAGE" -file "pause=$work/pause" \
			-entrypoint '["/pause"]' -user 65535:65535 >"$tar.digest"
		rm -rf "$work"
		prune_except "$IMAGES_DIR" pause- "$tar"
	fi
	echo "$tar"
}

busybox_version() {
	# Debian's "1:1.35.0-4+deb12u1+b1" -> "1.35.0"
	local v
	v=$(dpkg-query -W -f='${Version}' busybox-static)
	v=${v#*:}
	echo "${v%%-*}"
}

busybox_refs() {
	local v
	v=$(busybox_version)
	printf '%s\n' "docker.io/library/busybox:$v" "docker.io/library/busybox:${v%.*}" \
		"$BUSYBOX_IMAGE" docker.io/library/busybox:latest | awk '!seen[$0]++'
}

# build_busybox prints the path of the cached busybox image tar.
build_busybox() {
	if [[ -n ${BUSYBOX_IMAGE_TAR:-} ]]; then
		echo "$BUSYBOX_IMAGE_TAR"
		return
	fi
	[[ -x /bin/busybox ]] || die "/bin/busybox missing: run install-runtime.sh"
	local -a srcs
	mapfile -t srcs < <(go_sources "$PODLINE_SCRIPTS/ociimage")
	local tar
	tar=$IMAGES_DIR/busybox-$(input_hash /bin/busybox "${BASH_SOURCE[0]}" "${srcs[@]}").tar
	if [[ -s $tar && -s $tar.digest ]]; then
		echo "$tar"
		return
	fi
	log "building image $BUSYBOX_IMAGE from Debian's busybox-static"
	local work
	work=$(mktemp -d)
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'daemon:x:1:1:daemon:/usr/sbin:/bin/false' \
		'nobody:x:65534:65534:nobody:/home:/bin/false' >"$work/passwd"
	printf '%s\n' 'root:x:0:' 'daemon:x:1:' 'nogroup:x:65534:' >"$work/group"
	chmod 0644 "$work/passwd" "$work/group"
	local -a args=(-out "$tar" -file "bin/busybox=/bin/busybox"
		-file "etc/passwd=$work/passwd" -file "etc/group=$work/group"
		-dir tmp:1777 -dir root:700 -dir home -dir var -dir var/tmp:1777
		-env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
		-cmd '["sh"]')
	local applet ref
	# linuxrc is the initrd entry point, meaningless in a container.
	while read -r applet; do
		[[ $applet == linuxrc || $applet == bin/busybox ]] && continue
		args+=(-link "$applet=/bin/busybox")
	done < <(/bin/busybox --list-full | sort)
	while read -r ref; do args+=(-ref "$ref"); done < <(busybox_refs)
	"$(ociimage_tool)" "${args[@]}" >"$tar.digest"
	rm -rf "$work"
	prune_except "$IMAGES_DIR" busybox- "$tar"
	echo "$tar"
}

# import_tar TAR REF...: imports TAR unless every REF already points at the
# tar's manifest digest.
import_tar() {
	local tar=$1 want ref have listing
	shift
	want=$(<"$tar.digest")
	listing=$(pctr images ls)
	for ref in "$@"; do
		have=$(awk -v r="$ref" '$1 == r { print $3 }' <<<"$listing")
		if [[ $have != "$want" ]]; then
			log "importing $(basename "$tar") (${want:0:19})"
			pctr images import --snapshotter overlayfs "$tar" >/dev/null
			return
		fi
	done
}

main() {
	local mode=${1:-import}
	case $mode in
	build | import) ;;
	*) die "usage: images.sh [build|import]" ;;
	esac
	mkdir -p "$IMAGES_DIR"
	exec 9>"$PODLINE_CACHE/.images.lock"
	flock 9
	local pause busybox
	pause=$(build_pause)
	busybox=$(build_busybox)
	if [[ $mode == build ]]; then
		printf '%s\n' "$pause" "$busybox"
		return
	fi
	containerd_answers || die "containerd at $CONTAINERD_SOCK does not answer: run runtime.sh up"
	import_tar "$pause" "$PAUSE_IMAGE"
	local -a refs
	mapfile -t refs < <(busybox_refs)
	import_tar "$busybox" "${refs[@]}"
	# Pinned images are never removed by the runtime's image GC.
	pctr images label "$PAUSE_IMAGE" io.cri-containerd.pinned=pinned >/dev/null
}

main "$@"
