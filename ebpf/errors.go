package ebpf

import (
	"errors"
	"fmt"

	cebpf "github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// ErrUnsupported means this kernel or these privileges cannot run podline's
// BPF programs; podline then falls back to watching cgroup files. Errors of
// this class say what is missing.
var ErrUnsupported = errors.New("ebpf events unsupported")

// unsupported classifies a load or attach failure into ErrUnsupported with
// the reason an operator can act on.
func unsupported(step string, err error) error {
	var ve *cebpf.VerifierError
	switch {
	case errors.As(err, &ve):
		// The verifier's verdict is at the end of its log.
		return fmt.Errorf("%w: %s: verifier refused the program: %-12v", ErrUnsupported, step, ve)
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return fmt.Errorf("%w: %s: %w (podline needs CAP_BPF and CAP_PERFMON, or root)", ErrUnsupported, step, err)
	default:
		return fmt.Errorf("%w: %s: %w", ErrUnsupported, step, err)
	}
}
