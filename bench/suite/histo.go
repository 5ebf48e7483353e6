package main

import (
	"bufio"
	"context"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/podline/podline/bench/internal/result"
)

// histogram is one series of podline's VictoriaMetrics histograms: counts
// per vmrange bucket, keyed by the bucket's upper bound in seconds.
type histogram map[float64]float64

// scrape is what the suite keeps of one /metrics: histograms by their name
// with labels but without vmrange (e.g.
// `podline_stage_duration_seconds{stage="admit"}`), and plain samples.
type scrape struct {
	hist    map[string]histogram
	samples map[string]float64
}

func readMetrics(ctx context.Context, a agent) (*scrape, error) {
	body, err := a.client().Metrics(ctx)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return parseMetrics(body)
}

func parseMetrics(r io.Reader) (*scrape, error) {
	s := &scrape{hist: map[string]histogram{}, samples: map[string]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		series, val := line[:i], line[i+1:]
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			continue
		}
		name, labels, _ := strings.Cut(series, "{")
		if !strings.HasSuffix(name, "_bucket") || !strings.Contains(labels, `vmrange="`) {
			s.samples[series] = v
			continue
		}
		// labels: `stage="admit",vmrange="1.000e-06...1.136e-06"}`
		j := strings.Index(labels, `vmrange="`)
		rng := labels[j+len(`vmrange="`):]
		rng = rng[:strings.IndexByte(rng, '"')]
		_, upper, ok := strings.Cut(rng, "...")
		if !ok {
			continue
		}
		hi, err := strconv.ParseFloat(upper, 64)
		if err != nil {
			continue
		}
		rest := strings.TrimSuffix(strings.TrimSuffix(labels[:j], ","), ",")
		key := strings.TrimSuffix(name, "_bucket")
		if rest != "" {
			key += "{" + rest + "}"
		}
		h := s.hist[key]
		if h == nil {
			h = histogram{}
			s.hist[key] = h
		}
		h[hi] += v
	}
	return s, sc.Err()
}

// merged adds up the histograms of keys (missing ones count nothing).
func (s *scrape) merged(keys ...string) histogram {
	out := histogram{}
	for _, k := range keys {
		for hi, n := range s.hist[k] {
			out[hi] += n
		}
	}
	return out
}

func (h histogram) count() float64 {
	var n float64
	for _, c := range h {
		n += c
	}
	return n
}

// quantiles returns bucket upper bounds in ms: each quantile is at most
// the bucket's width (about 14 %) above the truth.
func (h histogram) quantiles() result.Quantiles {
	bounds := make([]float64, 0, len(h))
	for hi := range h {
		bounds = append(bounds, hi)
	}
	sort.Float64s(bounds)
	total := h.count()
	if total == 0 {
		return result.Quantiles{}
	}
	at := func(q float64) float64 {
		var cum float64
		for _, b := range bounds {
			cum += h[b]
			if cum >= q*total {
				return b * 1000
			}
		}
		return bounds[len(bounds)-1] * 1000
	}
	return result.Quantiles{P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: bounds[len(bounds)-1] * 1000}
}

// stageCRI names the CRI calls each stage makes on a pod's way up.
var stageCRI = []struct {
	stage string
	ops   []string
}{
	{"admit", nil},
	{"volumes", nil},
	{"sandbox", []string{"RunPodSandbox"}},
	{"containers", []string{"ImageStatus", "PullImage", "CreateContainer", "StartContainer"}},
	{"status", []string{"PodSandboxStatus", "ContainerStatus"}},
}

// stages splits podline's pod starts by stage from one scrape.
func stages(s *scrape) []result.Stage {
	var out []result.Stage
	for _, sc := range stageCRI {
		lbl := `{stage="` + sc.stage + `"}`
		work := s.hist["podline_stage_duration_seconds"+lbl]
		st := result.Stage{
			Name:      sc.stage,
			QueueWait: s.hist["podline_stage_queue_wait_seconds"+lbl].quantiles(),
			Work:      work.quantiles(),
			Passes:    int(work.count()),
		}
		var keys []string
		for _, op := range sc.ops {
			keys = append(keys, `podline_cri_request_duration_seconds{op="`+op+`"}`)
		}
		cri := s.merged(keys...)
		st.CRI = cri.quantiles()
		st.CRICall = int(cri.count())
		out = append(out, st)
	}
	return out
}
