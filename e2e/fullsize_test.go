//go:build e2e

package e2e

import (
	"os"
	"time"
)

// fullSize reports whether the fault and churn cases run at the size issue
// 15 states (a 60 s API server outage, 10 s fault phases, 50 pods of
// churn, a 75 s bootstrap certificate): `make reliability` sets
// PODLINE_E2E_FULL=1. `make test` runs the same cases and checks the same
// invariants over shorter windows, so that it stays a few minutes warm.
func fullSize() bool { return os.Getenv("PODLINE_E2E_FULL") == "1" }

// sized is full under fullSize, short otherwise.
func sized[T time.Duration | int](full, short T) T {
	if fullSize() {
		return full
	}
	return short
}
