package prober

import (
	"strings"
	"sync"

	"github.com/VictoriaMetrics/metrics"
)

// Metrics holds the kubelet's prober series, one per probe, in a set of
// its own: thousands of pods make thousands of series, which belong on
// their own endpoint (/metrics/probes), not on podline's /metrics.
var Metrics = metrics.NewSet()

// Counter results, as the kubelet labels them.
const (
	counterSuccessful = iota
	counterFailed
	counterUnknown
	numCounters
)

var resultLabels = [numCounters]string{"successful", "failed", "unknown"}

// refs counts the probes using each series name. prober_probe_total names
// the pod UID, but prober_probe_duration_seconds does not (as the
// kubelet's), so a pod deleted and created again under the same name
// shares it with its predecessor until that one is removed.
var (
	refsMu sync.Mutex
	refs   = map[string]int{}
)

// series is one probe's metrics, registered lazily at their first use (a
// probe that never fails has no failed series, as with the kubelet), and
// unregistered when the probe is removed. Created under the manager's lock
// only, so that a removal sees every name the probe registered.
type series struct {
	totalLabels    [numCounters]string
	durationLabels string
	total          [numCounters]*metrics.Counter
	duration       *metrics.PrometheusHistogram
}

func newSeries(k Kind, container, pod, namespace, uid string) *series {
	s := &series{}
	kind, c, p, ns, u := quote(k.String()), quote(container), quote(pod), quote(namespace), quote(uid)
	for r := range s.totalLabels {
		s.totalLabels[r] = `prober_probe_total{probe_type=` + kind + `,result="` + resultLabels[r] +
			`",container=` + c + `,pod=` + p + `,namespace=` + ns + `,pod_uid=` + u + `}`
	}
	s.durationLabels = `prober_probe_duration_seconds{probe_type=` + kind + `,container=` + c + `,pod=` + p + `,namespace=` + ns + `}`
	return s
}

// counter returns the counter of result r, registering it at first use.
func (s *series) counter(r int) *metrics.Counter {
	if s.total[r] == nil {
		s.total[r] = acquire(s.totalLabels[r], Metrics.GetOrCreateCounter)
	}
	return s.total[r]
}

// histogram returns the duration histogram, registering it at first use.
// Its buckets are the kubelet's (Prometheus' defaults, 5 ms to 10 s, with
// le labels), so that the kubelet's dashboards and histogram_quantile
// queries read podline's as they read the kubelet's.
func (s *series) histogram() *metrics.PrometheusHistogram {
	if s.duration == nil {
		s.duration = acquire(s.durationLabels, Metrics.GetOrCreatePrometheusHistogram)
	}
	return s.duration
}

// names lists the series registered so far, for release.
func (s *series) names() []string {
	var out []string
	for r, c := range s.total {
		if c != nil {
			out = append(out, s.totalLabels[r])
		}
	}
	if s.duration != nil {
		out = append(out, s.durationLabels)
	}
	return out
}

func acquire[M any](name string, get func(string) M) M {
	refsMu.Lock()
	defer refsMu.Unlock()
	refs[name]++
	return get(name)
}

// release drops one use of each name and unregisters the ones left
// unused. Called outside the manager's lock: unregistering scans the set.
func release(names []string) {
	refsMu.Lock()
	defer refsMu.Unlock()
	for _, n := range names {
		if refs[n]--; refs[n] <= 0 {
			delete(refs, n)
			Metrics.UnregisterMetric(n)
		}
	}
}

// quote makes a label value: names and UIDs are DNS-like, but a static pod
// from a file has been through no validation.
func quote(v string) string {
	if !strings.ContainsAny(v, "\\\"\n") {
		return `"` + v + `"`
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(v) + `"`
}
