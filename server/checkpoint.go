package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Checkpointer writes a checkpoint of a running container: the runtime's
// CheckpointContainer. podline's cri.Client is one.
type Checkpointer interface {
	CheckpointContainer(ctx context.Context, id, location string, timeout time.Duration) error
}

// checkpoint serves POST /checkpoint/{namespace}/{pod}/{container}, the
// kubelet's checkpoint API: the runtime writes the container's checkpoint
// as checkpoint-<pod>_<namespace>-<container>-<RFC 3339 time>.tar in the
// checkpoint directory, and the answer names the archive. An archive
// holds the container's memory, secrets included: the directory is the
// root user's alone.
func (s *Secure) checkpoint(w http.ResponseWriter, r *http.Request) {
	var timeout time.Duration
	if v := r.URL.Query().Get("timeout"); v != "" {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs < 0 {
			httpError(w, fmt.Errorf("%w: timeout %q: want a number of seconds", ErrBadRequest, v))
			return
		}
		timeout = time.Duration(secs) * time.Second
	}
	ns, pod, container := r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container")
	id, err := s.Locator.Container(ns, pod, "", container)
	if err != nil {
		httpError(w, err)
		return
	}
	if err := os.MkdirAll(s.CheckpointDir, 0o700); err != nil {
		httpError(w, fmt.Errorf("checkpoint directory: %w", err))
		return
	}
	path := filepath.Join(s.CheckpointDir, fmt.Sprintf("checkpoint-%s_%s-%s-%s.tar", pod, ns, container, time.Now().Format(time.RFC3339)))
	if err := s.Checkpointer.CheckpointContainer(r.Context(), id, path, timeout); err != nil {
		httpError(w, fmt.Errorf("checkpointing of %s/%s/%s failed (%w)", ns, pod, container, err))
		return
	}
	writeJSON(w, map[string][]string{"items": {path}})
}
