package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"

	"github.com/VictoriaMetrics/metrics"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podline/podline/machine"
	"github.com/podline/podline/stats"
)

// ReadOnly serves the unauthenticated read-only port.
type ReadOnly struct {
	// Pods returns the pods podline runs, with their status.
	Pods func() []v1.Pod
	// PodsJSON, when set, serves /pods in place of Pods: the same pods,
	// each already encoded as an item of the list.
	PodsJSON func() ([][]byte, error)
	// Machine returns the machine facts for /spec/.
	Machine func() *machine.Info
	// Stats takes a stats snapshot on request; nil leaves the stats
	// endpoints out.
	Stats   func(ctx context.Context) (*stats.Snapshot, error)
	Healthz http.Handler
	// Probes are the prober's series (prober_probe_total,
	// prober_probe_duration_seconds) for /metrics/probes; nil leaves it
	// out.
	Probes *metrics.Set
}

// Handler routes /pods, /spec/, /metrics (podline's own), the stats
// endpoints (/stats/summary, /metrics/resource, /metrics/cadvisor),
// /metrics/probes and /healthz.
func (s *ReadOnly) Handler() http.Handler { return s.mux() }

func (s *ReadOnly) mux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pods", s.pods)
	mux.HandleFunc("GET /pods/{$}", s.pods)
	mux.HandleFunc("GET /spec/{$}", s.spec)
	mux.HandleFunc("GET /spec", s.spec)
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		metrics.WritePrometheus(w, true)
	})
	if s.Stats != nil {
		mux.HandleFunc("GET /stats/summary", s.snapshot(func(w http.ResponseWriter, snap *stats.Snapshot) {
			writeJSON(w, stats.Summary(snap))
		}))
		mux.HandleFunc("GET /metrics/resource", s.snapshot(func(w http.ResponseWriter, snap *stats.Snapshot) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
			stats.WriteResource(w, snap)
		}))
		mux.HandleFunc("GET /metrics/cadvisor", s.snapshot(func(w http.ResponseWriter, snap *stats.Snapshot) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
			stats.WriteCadvisor(w, snap)
		}))
	}
	if s.Probes != nil {
		mux.HandleFunc("GET /metrics/probes", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
			s.Probes.WritePrometheus(w)
		})
	}
	if s.Healthz != nil {
		mux.Handle("GET /healthz", s.Healthz)
	}
	return mux
}

// podListHead and podListTail frame the encoded pods as the v1.PodList
// the kubelet's /pods answers with, byte for byte as encoding/json writes
// the list.
const (
	podListHead = `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[`
	podListTail = "]}\n"
)

func (s *ReadOnly) pods(w http.ResponseWriter, r *http.Request) {
	if s.PodsJSON != nil {
		items, err := s.PodsJSON()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		bw := bufio.NewWriterSize(w, 64<<10)
		bw.WriteString(podListHead)
		for i, item := range items {
			if i > 0 {
				bw.WriteByte(',')
			}
			bw.Write(item)
		}
		bw.WriteString(podListTail)
		// An error is a client gone away: the answer can only end.
		_ = bw.Flush()
		return
	}
	list := v1.PodList{
		TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"},
		Items:    s.Pods(),
	}
	writeJSON(w, &list)
}

func (s *ReadOnly) spec(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.Machine())
}

// statsSlots bounds the stats snapshots taken at once: each reads every
// pod's cgroup files, and a burst of scrapers must queue, not multiply
// that work.
var statsSlots = make(chan struct{}, 2)

// snapshot reads the stats for one request and hands them to write.
func (s *ReadOnly) snapshot(write func(http.ResponseWriter, *stats.Snapshot)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case statsSlots <- struct{}{}:
		case <-r.Context().Done():
			http.Error(w, "stats: too many requests at once", http.StatusServiceUnavailable)
			return
		}
		// The slot is for reading the node, not for a slow client's
		// download: it is given back before the answer is written.
		snap, err := s.Stats(r.Context())
		<-statsSlots
		if err != nil {
			http.Error(w, "collect stats: "+err.Error(), http.StatusInternalServerError)
			return
		}
		write(w, snap)
	}
}

// writeJSON streams v; an error midway (the client went away) can only
// end the answer, its status being out already.
func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
