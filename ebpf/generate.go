package ebpf

// The generated events_bpfel.{go,o} are committed so that building podline
// needs no clang; CI regenerates them and fails on a diff. Generating needs
// clang and llvm-strip: scripts/install-bpf-tools.sh.
//go:generate go tool bpf2go -tags linux -target bpfel -type event events bpf/events.c -- -I./bpf -Wall -Werror
