package main

import (
	"bufio"
	"context"
	"sort"
	"strconv"
	"strings"
)

// exitHistogram is podline's own measure of exit-detection latency: from
// the container's exit, as the kernel (events) or the runtime (relist)
// timed it, to the status that shows it. Unlike the /pods polling it needs
// no HTTP round trip, so it bounds podline's part from above to within a
// bucket (VictoriaMetrics buckets are ~12 % wide).
const exitHistogram = "podline_container_exit_to_status_seconds"

type bucket struct {
	upper float64 // seconds
	count float64
}

// histogram reads a VictoriaMetrics histogram's vmrange buckets.
func (a *agent) histogram(ctx context.Context, name string) ([]bucket, error) {
	body, err := a.client.Metrics(ctx)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	var out []bucket
	sc := bufio.NewScanner(body)
	prefix := name + `_bucket{vmrange="`
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), prefix)
		if !ok {
			continue
		}
		rng, val, ok := strings.Cut(rest, `"} `)
		if !ok {
			continue
		}
		_, hi, _ := strings.Cut(rng, "...")
		upper, err1 := strconv.ParseFloat(hi, 64)
		count, err2 := strconv.ParseFloat(val, 64)
		if err1 == nil && err2 == nil {
			out = append(out, bucket{upper: upper, count: count})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].upper < out[j].upper })
	return out, sc.Err()
}

// quantileMS is the upper bound of the bucket holding quantile q, in ms.
func quantileMS(bs []bucket, q float64) float64 {
	var total float64
	for _, b := range bs {
		total += b.count
	}
	if total == 0 {
		return 0
	}
	rank, seen := q*total, 0.0
	for _, b := range bs {
		seen += b.count
		if seen >= rank {
			return b.upper * 1000
		}
	}
	return bs[len(bs)-1].upper * 1000
}
