package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// ErrNotFound is the class of a pod or container the request names that
// is not on this node: a 404.
var ErrNotFound = errors.New("not found")

// ErrBadRequest is the class of a request that cannot be served as asked
// (say, the previous instance of a container that has none): a 400.
var ErrBadRequest = errors.New("bad request")

// Locator finds what a request names among the pods podline runs. uid ""
// matches any instance of the pod.
type Locator interface {
	// Container returns the ID of the running container.
	Container(namespace, pod, uid, container string) (string, error)
	// Sandbox returns the ID of the pod's ready sandbox.
	Sandbox(namespace, pod, uid string) (string, error)
	// LogFile returns the log file of the container's current instance,
	// or of the one before it, beneath Secure.PodLogsDir, and whether
	// that instance still runs.
	LogFile(namespace, pod, container string, previous bool) (path string, running func() bool, err error)
	// RunningPods lists the pods with a container running, as the
	// runtime has them.
	RunningPods() []v1.Pod
}

// Streamer is the part of the runtime that serves interactive streams: each
// call returns the URL of the runtime's streaming server for one session.
type Streamer interface {
	Exec(ctx context.Context, req *runtimeapi.ExecRequest) (string, error)
	Attach(ctx context.Context, req *runtimeapi.AttachRequest) (string, error)
	PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (string, error)
	ExecSync(ctx context.Context, id string, cmd []string, timeout time.Duration) (*runtimeapi.ExecSyncResponse, error)
}

// Secure is the authenticated port's content: everything the read-only
// port serves, and the endpoints that reach into containers and the node.
// Authentication and authorization wrap it (server/auth); it trusts that
// whoever reaches it was allowed.
type Secure struct {
	ReadOnly
	Locator  Locator
	Streamer Streamer
	// PodLogsDir is the pod log directory (--pod-logs-dir, resolved at
	// start) the Locator's log files lie beneath: they are opened from
	// it, through no link beneath it (see logs.OpenLog).
	PodLogsDir string
	// NodeLogs serves /logs/ (the node's log directory); nil leaves it out.
	NodeLogs http.Handler
	// Configz returns the sections of /configz by name: the running
	// configuration, under "kubeletconfig" as the kubelet's.
	Configz func() map[string]any
	// Checkpointer and CheckpointDir serve /checkpoint/; either unset
	// leaves it out.
	Checkpointer  Checkpointer
	CheckpointDir string
	// Debugging serves /debug/pprof/ (--enable-debugging-handlers).
	Debugging bool
	Log       *slog.Logger

	// Cmdline is what /debug/pprof/cmdline shows: the command line with
	// its credentials redacted (see cmdline.go).
	Cmdline []string
}

func (s *Secure) logger() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}

// Handler routes the kubelet's paths. Without Debugging the endpoints that
// reach into containers and the node's files answer 405, as the kubelet's
// --enable-debugging-handlers=false has them.
func (s *Secure) Handler() http.Handler {
	mux := s.ReadOnly.mux()
	if s.Configz != nil {
		mux.HandleFunc("GET /configz", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, s.Configz())
		})
	}
	debug := func(pattern string, h http.Handler) {
		if !s.Debugging {
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Error(w, "Debug endpoints are disabled.", http.StatusMethodNotAllowed)
			})
		}
		mux.Handle(pattern, h)
	}
	debug("GET /runningpods/{$}", http.HandlerFunc(s.runningPods))
	debug("GET /containerLogs/{namespace}/{pod}/{container}", progressing(http.HandlerFunc(s.containerLogs)))
	if s.NodeLogs != nil {
		debug("GET /logs/", progressing(http.StripPrefix("/logs", plainText(s.NodeLogs))))
	}
	for _, m := range []string{"GET", "POST"} {
		debug(m+" /exec/{namespace}/{pod}/{container}", http.HandlerFunc(s.exec))
		debug(m+" /exec/{namespace}/{pod}/{uid}/{container}", http.HandlerFunc(s.exec))
		debug(m+" /attach/{namespace}/{pod}/{container}", http.HandlerFunc(s.attach))
		debug(m+" /attach/{namespace}/{pod}/{uid}/{container}", http.HandlerFunc(s.attach))
		debug(m+" /portForward/{namespace}/{pod}", http.HandlerFunc(s.portForward))
		debug(m+" /portForward/{namespace}/{pod}/{uid}", http.HandlerFunc(s.portForward))
	}
	debug("POST /run/{namespace}/{pod}/{container}", http.HandlerFunc(s.run))
	debug("POST /run/{namespace}/{pod}/{uid}/{container}", http.HandlerFunc(s.run))
	if s.Checkpointer != nil && s.CheckpointDir != "" {
		debug("POST /checkpoint/{namespace}/{pod}/{container}", http.HandlerFunc(s.checkpoint))
	}
	debug("GET /debug/pprof/", progressing(http.HandlerFunc(pprof.Index)))
	debug("GET /debug/pprof/cmdline", cmdline(s.Cmdline))
	debug("GET /debug/pprof/profile", progressing(http.HandlerFunc(pprof.Profile)))
	debug("GET /debug/pprof/symbol", http.HandlerFunc(pprof.Symbol))
	debug("GET /debug/pprof/trace", progressing(http.HandlerFunc(pprof.Trace)))
	return mux
}

// plainText serves files as text whatever their names say: a pod that can
// write under /var/log must not get a page of its own rendered by whoever
// reads the log through the API server's proxy.
func plainText(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Security-Policy", "sandbox")
		if !strings.HasSuffix(r.URL.Path, "/") {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Secure) runningPods(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, &v1.PodList{
		TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"},
		Items:    s.Locator.RunningPods(),
	})
}

// httpError answers err with the status its class calls for.
func httpError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, ErrBadRequest):
		code = http.StatusBadRequest
	}
	http.Error(w, err.Error(), code)
}
