package sources

import (
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Error classes; test with errors.Is. Messages carry the details (file or
// URL, field path) so a log line alone says what to fix.
var (
	// ErrDecode: the manifest is not a well-formed v1 Pod, PodList or List.
	ErrDecode = errors.New("cannot decode manifest")
	// ErrInvalid: a pod decoded but failed validation.
	ErrInvalid = errors.New("invalid pod")
	// ErrFetch: the manifest could not be read (file) or fetched (URL).
	ErrFetch = errors.New("cannot fetch manifest")
)

// classError is an error of one class whose message is only its details,
// e.g. "spec.containers[0].image: Required value".
type classError struct {
	class error
	msg   string
	cause error
}

func (e *classError) Error() string        { return e.msg }
func (e *classError) Is(target error) bool { return target == e.class }
func (e *classError) Unwrap() error        { return e.cause }

func newClassError(class error, msg string, cause error) error {
	return &classError{class: class, msg: msg, cause: cause}
}

// invalidError turns a validation result into one ErrInvalid error. The
// messages are joined by "; " rather than the bracketed list of
// field.ErrorList.ToAggregate so a single error reads plainly.
func invalidError(errs field.ErrorList) error {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return newClassError(ErrInvalid, strings.Join(msgs, "; "), errs.ToAggregate())
}
