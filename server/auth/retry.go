package auth

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// reviewBackoff is the wait before each retry of a TokenReview or
// SubjectAccessReview, the kubelet's webhook backoff (500ms, growing by
// half each time, five tries in all): a restarting apiserver should cost a
// request a few seconds, not a 401.
var reviewBackoff = []time.Duration{500 * time.Millisecond, 750 * time.Millisecond, 1125 * time.Millisecond, 1687 * time.Millisecond}

// withRetry calls f until it succeeds, fails for good, the waits in
// backoff run out, or ctx ends.
func withRetry(ctx context.Context, backoff []time.Duration, f func() error) error {
	err := f()
	for _, wait := range backoff {
		if err == nil || !retriable(err) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		err = f()
	}
	return err
}

// retriable tells a passing failure (the apiserver unreachable, busy or
// failing) from an answer that another try would only repeat (a 4xx).
func retriable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		code := st.Status().Code
		return code == 429 || code >= 500 || code == 0
	}
	return true
}
