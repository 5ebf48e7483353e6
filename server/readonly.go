package server

import (
	"encoding/json"
	"net/http"

	"github.com/VictoriaMetrics/metrics"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podline/podline/machine"
)

// ReadOnly serves the unauthenticated read-only port.
type ReadOnly struct {
	// Pods returns the pods podline runs, with their status.
	Pods func() []v1.Pod
	// Machine returns the machine facts for /spec/.
	Machine func() *machine.Info
	Healthz http.Handler
}

// Handler routes /pods, /spec/, /metrics (podline's own) and /healthz.
func (s *ReadOnly) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pods", s.pods)
	mux.HandleFunc("GET /pods/", s.pods)
	mux.HandleFunc("GET /spec/", s.spec)
	mux.HandleFunc("GET /spec", s.spec)
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		metrics.WritePrometheus(w, true)
	})
	if s.Healthz != nil {
		mux.Handle("GET /healthz", s.Healthz)
	}
	return mux
}

func (s *ReadOnly) pods(w http.ResponseWriter, r *http.Request) {
	list := v1.PodList{
		TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"},
		Items:    s.Pods(),
	}
	writeJSON(w, &list)
}

func (s *ReadOnly) spec(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, s.Machine())
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}
