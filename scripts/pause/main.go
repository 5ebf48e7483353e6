// Command pause is the sandbox ("pause") process of the podline dev harness's
// local image registry.k8s.io/pause:3.10. It holds a pod's namespaces open:
// it sleeps until SIGTERM or SIGINT and then exits 0, and as PID 1 of a
// shared PID namespace it reaps orphaned children so no zombies pile up.
//
// It uses only the standard library and is built with CGO_ENABLED=0 so the
// image needs nothing but this one static binary.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println("podline pause 3.10")
		return
	}
	// Buffered: SIGCHLDs coalesce in the kernel anyway, and reap drains all
	// exited children per delivery, so a full buffer loses nothing.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for sig := range sigs {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		fmt.Fprintf(os.Stderr, "pause: shutting down on %v\n", sig)
		os.Exit(0)
	}
}

// reap collects every child that has exited without blocking on live ones.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
