package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/pprof"
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
	// or of the one before it, and whether that instance still runs.
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
	// NodeLogs serves /logs/ (the node's log directory); nil leaves it out.
	NodeLogs http.Handler
	// Configz returns the running configuration for /configz.
	Configz func() any
	// Debugging serves /debug/pprof/ (--enable-debugging-handlers).
	Debugging bool
	Log       *slog.Logger
}

func (s *Secure) logger() *slog.Logger {
	if s.Log == nil {
		return slog.Default()
	}
	return s.Log
}

// Handler routes the kubelet's paths.
func (s *Secure) Handler() http.Handler {
	mux := s.ReadOnly.mux()
	mux.HandleFunc("GET /runningpods/", s.runningPods)
	if s.Configz != nil {
		mux.HandleFunc("GET /configz", func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, map[string]any{"kubeletconfig": s.Configz()})
		})
	}
	mux.HandleFunc("GET /containerLogs/{namespace}/{pod}/{container}", s.containerLogs)
	if s.NodeLogs != nil {
		mux.Handle("GET /logs/", http.StripPrefix("/logs", s.NodeLogs))
	}
	for _, m := range []string{"GET", "POST"} {
		mux.HandleFunc(m+" /exec/{namespace}/{pod}/{container}", s.exec)
		mux.HandleFunc(m+" /exec/{namespace}/{pod}/{uid}/{container}", s.exec)
		mux.HandleFunc(m+" /attach/{namespace}/{pod}/{container}", s.attach)
		mux.HandleFunc(m+" /attach/{namespace}/{pod}/{uid}/{container}", s.attach)
		mux.HandleFunc(m+" /portForward/{namespace}/{pod}", s.portForward)
		mux.HandleFunc(m+" /portForward/{namespace}/{pod}/{uid}", s.portForward)
	}
	mux.HandleFunc("POST /run/{namespace}/{pod}/{container}", s.run)
	mux.HandleFunc("POST /run/{namespace}/{pod}/{uid}/{container}", s.run)
	if s.Debugging {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return mux
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
