// Command fakecri serves podline's fake CRI runtime (cri/fake) on a unix
// socket as a process of its own, so that any CRI client, podline or an
// upstream kubelet, can be pointed at it for benchmarks. Its calls take
// containerd's measured latencies unless flags say otherwise; an optional
// HTTP control listener makes containers exit and reports call counts.
// For reliability tests it injects faults: --hang Method=name makes the
// calls about one pod or container block until the caller gives up, and
// --slow adds a delay to every call.
//
// It owns its flags, its socket files and the control listener; the
// runtime itself lives in cri/fake.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		fmt.Fprintf(os.Stderr, "fakecri: %v\n", err)
		os.Exit(2)
	default:
		fmt.Fprintf(os.Stderr, "fakecri: %v\n", err)
		os.Exit(1)
	}
}
