package server

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/podline/podline/logs"
)

// containerLogs serves /containerLogs/{namespace}/{pod}/{container} from
// the container's CRI log file, with the kubelet's query parameters.
func (s *Secure) containerLogs(w http.ResponseWriter, r *http.Request) {
	opts, err := logs.ParseQuery(r.URL.Query(), time.Now())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ns, pod, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	path, running, err := s.Locator.LogFile(ns, pod, container, opts.Previous)
	if err != nil {
		httpError(w, err)
		return
	}
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			httpError(w, fmt.Errorf("%w: container %q in pod %q has no log yet", ErrBadRequest, container, pod))
			return
		}
		s.logger().Warn("container log", "pod", ns+"/"+pod, "container", container, "err", err)
		httpError(w, fmt.Errorf("container %q in pod %q: log unreadable", container, pod))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if err := logs.Read(r.Context(), path, opts, w, running); err != nil && r.Context().Err() == nil {
		// The status is out: all that is left is to say so in the log.
		s.logger().Warn("container log", "pod", ns+"/"+pod, "container", container, "err", err)
	}
}
