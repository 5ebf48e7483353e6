package prober

import "errors"

// Error classes of a run that could not probe at all (the kubelet's
// "errored" runs, as opposed to failed ones). Such a run changes no
// result: its event says "errored and resulted in unknown state" and it
// counts as result="unknown". Matched with errors.Is; the message is the
// cause's alone, worded as the kubelet words it.
var (
	// errPort: the probe's port names no port of the container, or is out
	// of range.
	errPort = errors.New("probe port")
	// errExec: the runtime did not run the command (not a timeout, not an
	// exit code: the container is gone, the runtime is down, no Execer).
	errExec = errors.New("probe exec")
	// errNoAction: the probe has no handler (validation lets none through).
	errNoAction = errors.New("probe has no action")
	// errPanic: a handler panicked; the worker survives it.
	errPanic = errors.New("probe panicked")
)

// classError carries a class for errors.Is and prints only its cause.
type classError struct {
	class error
	cause error
}

func (e *classError) Error() string   { return e.cause.Error() }
func (e *classError) Unwrap() []error { return []error{e.class, e.cause} }

func classed(class, cause error) error { return &classError{class: class, cause: cause} }
