package cri

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Error classes. Every error a Client method returns matches exactly one of
// them with errors.Is, so callers decide retries and fallbacks by class and
// never by reading messages.
var (
	// ErrNotFound: the sandbox, container or image does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists: a sandbox or container name is still reserved.
	ErrAlreadyExists = errors.New("already exists")
	// ErrUnavailable: the runtime is down, restarting or refused the connection.
	ErrUnavailable = errors.New("unavailable")
	// ErrDeadline: the request timeout (ours or the runtime's) ran out.
	ErrDeadline = errors.New("deadline exceeded")
	// ErrCanceled: the caller's context was canceled.
	ErrCanceled = errors.New("canceled")
	// ErrInvalid: the request cannot succeed as sent or in the object's
	// current state (InvalidArgument, FailedPrecondition, OutOfRange).
	ErrInvalid = errors.New("invalid")
	// ErrUnimplemented: the runtime does not offer this call (for example
	// GetContainerEvents on containerd 1.6).
	ErrUnimplemented = errors.New("unimplemented")
	// ErrUnknown: anything else the runtime reported.
	ErrUnknown = errors.New("unknown")
)

// IsNotFound reports whether err is of class ErrNotFound.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsUnavailable reports whether err is of class ErrUnavailable.
func IsUnavailable(err error) bool { return errors.Is(err, ErrUnavailable) }

// IsDeadline reports whether err is of class ErrDeadline.
func IsDeadline(err error) bool { return errors.Is(err, ErrDeadline) }

// classOf is the only place where a gRPC status becomes an error class. It
// looks at the status code alone: runtimes word their messages differently
// and change them between releases.
func classOf(err error) error {
	if st, ok := status.FromError(err); ok {
		switch st.Code() {
		case codes.NotFound:
			return ErrNotFound
		case codes.AlreadyExists:
			return ErrAlreadyExists
		case codes.Unavailable:
			return ErrUnavailable
		case codes.DeadlineExceeded:
			return ErrDeadline
		case codes.Canceled:
			return ErrCanceled
		case codes.InvalidArgument, codes.FailedPrecondition, codes.OutOfRange:
			return ErrInvalid
		case codes.Unimplemented:
			return ErrUnimplemented
		}
		return ErrUnknown
	}
	// Not a status: a context error that escaped the gRPC layer.
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return ErrDeadline
	case errors.Is(err, context.Canceled):
		return ErrCanceled
	}
	return ErrUnknown
}

// opError is what every failed call returns: the op, what it acted on, the
// class and the runtime's own error, e.g.
// "ContainerStatus abc123: not found: rpc error: code = NotFound desc = ...".
type opError struct {
	op      string
	subject string
	class   error
	cause   error
}

func (e *opError) Error() string {
	s := e.op
	if e.subject != "" {
		s += " " + e.subject
	}
	return s + ": " + e.class.Error() + ": " + e.cause.Error()
}

// Unwrap exposes both the class (for errors.Is with the sentinels) and the
// cause (for status.Code and context errors).
func (e *opError) Unwrap() []error { return []error{e.class, e.cause} }

func newOpError(op, subject string, cause error) error {
	class := classOf(cause)
	countError(class)
	return &opError{op: op, subject: subject, class: class, cause: cause}
}

// RuntimeError returns the runtime's own error inside err, as the runtime
// worded it ("rpc error: code = NotFound desc = ..."), for messages users
// compare with what other nodes say; err itself if no call made it.
func RuntimeError(err error) error {
	var oe *opError
	if errors.As(err, &oe) {
		return oe.cause
	}
	return err
}
