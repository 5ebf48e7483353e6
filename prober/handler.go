package prober

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// verdict is what one run of a handler says, before thresholds.
type verdict uint8

const (
	// succeeded: the container answered as healthy.
	succeeded verdict = iota
	// warned: healthy, with something the user should hear of (an HTTP
	// redirect not followed); counts as a success.
	warned
	// failed: the container answered unhealthy, or not within the timeout.
	failed
	// errored: the probe could not be made (see the error classes); the
	// run is thrown away, as the kubelet throws it away.
	errored
)

// outcome is one run's verdict with the text the events carry: the
// command's output, the HTTP status, the dial error.
type outcome struct {
	verdict verdict
	output  string
	err     error
}

// target is where one run goes: what can change between runs of the same
// probe (the pod's IP with its sandbox, the container with its restarts).
type target struct {
	ip          string
	containerID string
}

// handler runs one kind of probe action. A handler is built once per probe
// and never runs twice at once (a probe has at most one run in flight).
type handler interface {
	run(ctx context.Context, t target, timeout time.Duration) outcome
}

// brokenHandler is a probe that cannot run; every run errors.
type brokenHandler struct{ err error }

func (b brokenHandler) run(context.Context, target, time.Duration) outcome {
	return outcome{verdict: errored, err: b.err}
}

var errNoActionCause = errors.New("missing probe handler")

// safeRun runs h and turns a panic into an errored run: one bad probe must
// not take the worker, or podline, with it.
func safeRun(ctx context.Context, h handler, t target, timeout time.Duration) (out outcome) {
	defer func() {
		if r := recover(); r != nil {
			out = outcome{verdict: errored, err: classed(errPanic, fmt.Errorf("probe panicked: %v", r))}
		}
	}()
	return h.run(ctx, t, timeout)
}
