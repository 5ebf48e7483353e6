#!/usr/bin/env bash
# install-bpf-tools.sh: installs what `go generate ./ebpf/` needs to rebuild
# podline's BPF objects: clang (compiles bpf/events.c for the bpf target) and
# llvm (llvm-strip, which bpf2go runs on the object). The programs include
# only a hand-written header of kernel types, so no libbpf-dev, kernel headers
# or bpftool. Idempotent: returns at once when everything is installed.
set -euo pipefail

APT_PACKAGES=(clang llvm)

missing=()
for p in "${APT_PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

[[ $(id -u) -eq 0 ]] || { echo "install-bpf-tools.sh: apt-get needs root to install ${missing[*]}" >&2; exit 1; }
echo "[podline] apt-get install ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Update only when the lists are too old to know (or fetch) a package.
if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; then
	apt-get update -q >&2
	apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi
