package podspec

import "errors"

// ErrUnsupported marks a field the API accepts but podline does not
// resolve. Validation reports it as not supported; at run time the
// container fails with CreateContainerConfigError instead of running
// without the value.
var ErrUnsupported = errors.New("unsupported")
