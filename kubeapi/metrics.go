package kubeapi

import (
	"context"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	clientmetrics "k8s.io/client-go/tools/metrics"
)

// The client's own view of the API server: how many requests, how they
// ended, how long they took, and how long the client-side rate limit held
// them back, which is where --kube-api-qps shows when pods start in bulk.
var (
	rateLimiterWait = metrics.NewHistogram(`podline_api_rate_limiter_wait_seconds`)
	requestDuration = durationByVerb("GET", "LIST", "WATCH", "POST", "PUT", "PATCH", "DELETE")
)

func durationByVerb(verbs ...string) map[string]*metrics.Histogram {
	m := make(map[string]*metrics.Histogram, len(verbs))
	for _, v := range verbs {
		m[v] = metrics.NewHistogram(fmt.Sprintf(`podline_api_request_duration_seconds{verb=%q}`, v))
	}
	return m
}

var registerOnce sync.Once

// registerMetrics points client-go's request hooks at podline's metrics.
// client-go keeps them process-wide, so this happens once.
func registerMetrics() {
	registerOnce.Do(func() {
		clientmetrics.Register(clientmetrics.RegisterOpts{
			RequestLatency:     requestLatency{},
			RateLimiterLatency: limiterLatency{},
			RequestResult:      requestResult{},
		})
	})
}

type requestLatency struct{}

func (requestLatency) Observe(_ context.Context, verb string, _ url.URL, d time.Duration) {
	if h := requestDuration[verb]; h != nil {
		h.Update(d.Seconds())
	}
}

type limiterLatency struct{}

func (limiterLatency) Observe(_ context.Context, _ string, _ url.URL, d time.Duration) {
	rateLimiterWait.Update(d.Seconds())
}

type requestResult struct{}

// Increment counts a finished request by method and status code; the set
// of both is small, so the series are made as they first appear.
func (requestResult) Increment(_ context.Context, code, method, _ string) {
	metrics.GetOrCreateCounter(fmt.Sprintf(`podline_api_requests_total{method=%q,code=%q}`, method, code)).Inc()
}
