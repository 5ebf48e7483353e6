#!/usr/bin/env bash
# install-bpf-tools.sh: installs what `go generate ./ebpf/` needs to rebuild
# podline's BPF objects: clang (compiles bpf/events.c for the bpf target) and
# llvm (llvm-strip, which bpf2go runs on the object). The programs include
# only a hand-written header of kernel types, so no libbpf-dev, kernel headers
# or bpftool. Idempotent: returns at once when everything is installed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

APT_PACKAGES=(clang llvm)

missing=()
for p in "${APT_PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

need_root install-bpf-tools.sh
apt_install "${missing[@]}"
