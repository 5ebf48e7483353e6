package cri

import (
	"context"
	"time"

	"google.golang.org/grpc"
)

// invoke is the single wrapper around every unary CRI call (and the opening
// of the event stream): it applies the deadline, records the latency and
// turns a failure into a classified, op-named error. timeout <= 0 means the
// caller's ctx alone bounds the call.
func invoke[Req, Resp any](
	ctx context.Context, o *op, subject string, timeout time.Duration,
	rpc func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req,
) (Resp, error) {
	start := time.Now()
	// A caller's own deadline that comes first makes ours moot: skip the
	// context and timer (an exec probe sets a tighter one on every run).
	if d, ok := ctx.Deadline(); ok && time.Until(d) <= timeout {
		timeout = 0
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	resp, err := rpc(ctx, req)
	o.duration.UpdateDuration(start)
	if err != nil {
		var zero Resp
		return zero, newOpError(o.name, subject, err)
	}
	return resp, nil
}

// wholeSeconds rounds d up: the CRI counts grace periods and exec timeouts
// in seconds, and a container must never get less time than it was given.
func wholeSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}
