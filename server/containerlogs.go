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
	// Lstat: a link planted there is not followed even to look; Read
	// refuses it.
	if _, err := os.Lstat(path); err != nil {
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
	// The status goes out with the first bytes: a follow that cannot
	// start (say, no inotify instance left) is an error the client sees,
	// not an empty 200.
	cw := &countingWriter{ResponseWriter: w}
	err = logs.Read(r.Context(), s.PodLogsDir, path, opts, cw, running)
	switch {
	case err == nil || r.Context().Err() != nil:
		if !cw.sent {
			w.WriteHeader(http.StatusOK)
		}
	case !cw.sent:
		s.logger().Warn("container log", "pod", ns+"/"+pod, "container", container, "err", err)
		httpError(w, fmt.Errorf("container %q in pod %q: log unreadable", container, pod))
	default:
		// The status is out: all that is left is to say so in the log.
		s.logger().Warn("container log", "pod", ns+"/"+pod, "container", container, "err", err)
	}
}

// countingWriter knows whether the status went out: with the first
// write or flush.
type countingWriter struct {
	http.ResponseWriter
	sent bool
}

func (c *countingWriter) Write(b []byte) (int, error) {
	c.sent = true
	return c.ResponseWriter.Write(b)
}

func (c *countingWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		c.sent = true
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
