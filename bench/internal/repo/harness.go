package repo

import (
	"os"
	"path/filepath"
)

// HarnessRun is the directory of the harness containerd's socket and pid
// file: $PODLINE_RUN, as scripts/lib.sh reads it, or lib.sh's default. A
// harness moved elsewhere (PODLINE_RUN=...) is found where it runs.
func HarnessRun() string {
	if d := os.Getenv("PODLINE_RUN"); d != "" {
		return d
	}
	return "/run/podline-dev"
}

// HarnessSocket is the harness containerd's socket.
func HarnessSocket() string { return filepath.Join(HarnessRun(), "containerd.sock") }

// HarnessPidFile is the harness containerd's pid file.
func HarnessPidFile() string { return filepath.Join(HarnessRun(), "containerd.pid") }
