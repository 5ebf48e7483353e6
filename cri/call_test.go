package cri

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
)

// TestInvokeDeadline: the call is bounded by whichever comes first, the
// caller's deadline or invoke's own timeout.
func TestInvokeDeadline(t *testing.T) {
	o := opExecSync
	var seen time.Duration
	rpc := func(ctx context.Context, _ struct{}, _ ...grpc.CallOption) (struct{}, error) {
		d, ok := ctx.Deadline()
		if !ok {
			t.Fatal("the call has no deadline")
		}
		seen = time.Until(d)
		return struct{}{}, nil
	}
	for _, tc := range []struct {
		name            string
		caller, timeout time.Duration
		lo, hi          time.Duration
	}{
		{"caller's first", time.Second, time.Minute, 0, time.Second},
		{"ours first", time.Minute, time.Second, 0, time.Second},
		{"caller's alone", time.Second, 0, 0, time.Second},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), tc.caller)
		if _, err := invoke(ctx, o, "x", tc.timeout, rpc, struct{}{}); err != nil {
			t.Fatal(err)
		}
		cancel()
		if seen <= tc.lo || seen > tc.hi {
			t.Errorf("%s: the call's deadline is %v away, want in (%v, %v]", tc.name, seen, tc.lo, tc.hi)
		}
	}
}
