package logs

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Options is what a /containerLogs request asks for, resolved against the
// time it arrived.
type Options struct {
	Follow bool
	// Previous asks for the previous instance's log; the caller picks the
	// file, Read does not look at it.
	Previous bool
	// TailLines, when set, starts at the last so many lines (0: none, but
	// a follower still gets what comes next).
	TailLines *int64
	// SinceTime, when set, skips entries stamped before it.
	SinceTime  *time.Time
	Timestamps bool
	// LimitBytes, when set, ends the answer after that many bytes, even
	// in the middle of a line.
	LimitBytes *int64
}

// ErrBadRequest marks a query the client got wrong (HTTP 400); the error
// names the parameter and the value.
var ErrBadRequest = errors.New("bad request")

func badRequest(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, args...))
}

// ParseQuery decodes the query of a /containerLogs request, with the
// API's own decoders for PodLogOptions' fields (so "follow=1",
// "follow=" and "follow=TRUE" mean what the API server means by them),
// and validates it as the API server validates PodLogOptions: an answer
// the API server would refuse is refused here too, not guessed at.
func ParseQuery(q url.Values, now time.Time) (Options, error) {
	var p v1.PodLogOptions
	if err := decode(q, &p); err != nil {
		return Options{}, err
	}
	if err := validate(&p); err != nil {
		return Options{}, err
	}
	o := Options{
		Follow:     p.Follow,
		Previous:   p.Previous,
		TailLines:  p.TailLines,
		Timestamps: p.Timestamps,
		LimitBytes: p.LimitBytes,
	}
	switch {
	case p.SinceSeconds != nil && *p.SinceSeconds < math.MaxInt64/int64(time.Second):
		since := now.Add(-time.Duration(*p.SinceSeconds) * time.Second)
		o.SinceTime = &since
	case p.SinceTime != nil && !p.SinceTime.IsZero():
		// An empty sinceTime decodes as the zero time: no bound.
		since := p.SinceTime.Time
		o.SinceTime = &since
	}
	return o, nil
}

// decode fills p field by field with apimachinery's converters for query
// values. client-go's scheme cannot decode PodLogOptions from a query: the
// url.Values conversion is generated into the API server's internal
// packages, not into k8s.io/api.
func decode(q url.Values, p *v1.PodLogOptions) error {
	var err error
	param := func(name string, conv func(v []string) error) {
		if v := q[name]; err == nil && len(v) > 0 {
			if e := conv(v); e != nil {
				err = badRequest("%s=%q: %v", name, v[0], e)
			}
		}
	}
	boolean := func(out *bool) func([]string) error {
		return func(v []string) error { return runtime.Convert_Slice_string_To_bool(&v, out, nil) }
	}
	integer := func(out **int64) func([]string) error {
		return func(v []string) error { return runtime.Convert_Slice_string_To_Pointer_int64(&v, out, nil) }
	}
	param("follow", boolean(&p.Follow))
	param("previous", boolean(&p.Previous))
	param("timestamps", boolean(&p.Timestamps))
	param("sinceSeconds", integer(&p.SinceSeconds))
	param("limitBytes", integer(&p.LimitBytes))
	param("sinceTime", func(v []string) error {
		return metav1.Convert_Slice_string_To_Pointer_v1_Time(&v, &p.SinceTime, nil)
	})
	// "tail" is the old name of tailLines, and "all" its way of saying
	// no tail; it wins over tailLines, as in the kubelet.
	switch tail := q.Get("tail"); tail {
	case "":
		param("tailLines", integer(&p.TailLines))
	case "all":
	default:
		param("tail", integer(&p.TailLines))
	}
	if s := q.Get("stream"); s != "" {
		ls := s
		p.Stream = &ls
	}
	return err
}

// validate refuses what the API server's PodLogOptions validation
// refuses, with the same wording.
func validate(p *v1.PodLogOptions) error {
	switch {
	case p.TailLines != nil && *p.TailLines < 0:
		return badRequest("tailLines=%d: must be greater than or equal to 0", *p.TailLines)
	case p.LimitBytes != nil && *p.LimitBytes < 1:
		return badRequest("limitBytes=%d: must be greater than 0", *p.LimitBytes)
	case p.SinceSeconds != nil && p.SinceTime != nil:
		return badRequest("at most one of `sinceTime` or `sinceSeconds` may be specified")
	case p.SinceSeconds != nil && *p.SinceSeconds < 1:
		return badRequest("sinceSeconds=%d: must be greater than 0", *p.SinceSeconds)
	case p.Stream != nil && *p.Stream != v1.LogStreamAll:
		// The streams are one file and one answer here, as in a kubelet
		// without the PodLogsQuerySplitStreams gate.
		return badRequest("stream=%q: only %q is served", *p.Stream, v1.LogStreamAll)
	}
	return nil
}
