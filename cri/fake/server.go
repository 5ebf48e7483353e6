// Package fake is an in-memory CRI runtime served over real gRPC, for unit
// tests and for benchmarks that drive thousands of pods through podline or
// any other CRI client (cmd/fakecri serves it as a process of its own).
//
// It owns sandboxes, containers and images with the CRI state machines
// (sandbox READY→NOTREADY, container CREATED→RUNNING→EXITED), per-method
// latency, fault injection, a container event stream and believable stats,
// and it answers every call a kubelet makes routinely (runtime config,
// filesystem info, stats, streaming lists). It never touches the host:
// no processes, cgroups or network, and no files besides its socket and,
// with Options.LogFiles, empty container log files where a real runtime
// would write them. It stands in for containerd only in unit tests and
// benchmarks, never in end-to-end tests.
//
// Containers are steered through their environment: FAKE_EXIT_AFTER=<duration>
// makes one exit by itself (FAKE_EXIT_CODE=<int>, default 0), and
// FAKE_STOP_EXIT_CODE=<int> is the code StopContainer leaves (default 143,
// a process that died of SIGTERM). ExitContainer ends one on request.
package fake

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Options configure a Server. The zero value is a runtime that answers at
// once and pulls any image.
type Options struct {
	// Latency is the time each CRI method (by its name, e.g.
	// "RunPodSandbox") takes before it acts; missing methods take
	// DefaultLatency.
	Latency        map[string]time.Duration
	DefaultLatency time.Duration
	// Images, when non-empty, are the only names PullImage accepts.
	Images []string
	// Preloaded images are present from the start.
	Preloaded []string
	// ImageAuth makes images private, as a registry with auth would: a
	// pull of a name listed here (short or full form) succeeds only with
	// the "user:password" given, and fails otherwise with a registry's
	// 401 in the message. Names not listed pull without credentials.
	ImageAuth map[string]string
	// EventBuffer is how many events each GetContainerEvents stream may
	// queue before further events for it are dropped (default 1024).
	EventBuffer int
	// Exec, when set, answers ExecSync for running containers; the default
	// echoes for "echo", fails with 1 for "false" and succeeds otherwise.
	Exec func(containerID string, cmd []string) (stdout, stderr []byte, exitCode int32)
	// FsMountpoint is the directory ImageFsInfo and container stats name as
	// the image and container filesystem (default "/"). A client such as
	// the kubelet resolves it to a device with cAdvisor, so it must exist.
	FsMountpoint string
	// LogFiles makes StartContainer and ReopenContainerLog create the
	// container's empty log file (and its directory), as a runtime's log
	// writer does; clients that rotate or measure logs need it to exist.
	LogFiles bool
	// PodSubnet is the IPv4 /16 pod addresses come from (default
	// 10.88.0.0/16). A subnet of 127.0.0.0/8, e.g. 127.88.0.0/16, gives
	// every pod a loopback address of its own: one server on 0.0.0.0
	// answers every pod's HTTP probe, which is what the probes benchmark
	// needs.
	PodSubnet string
	// Hangs are calls that block until their caller gives up (see Hang).
	Hangs []Hang
	// Slow is added to every call's latency: a runtime under load.
	Slow time.Duration
	// Events is how GetContainerEvents answers (default EventsStream).
	Events EventsMode
}

// Server is the fake runtime. Create it with New; it is safe for
// concurrent use.
type Server struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	runtimeapi.UnimplementedImageServiceServer

	opts    Options
	methods map[string]*method // by CRI method name; read-only after New
	faults  faults
	grpc    *grpc.Server
	dropped atomic.Int64
	hung    atomic.Int64 // calls blocked by an injected Hang
	stop    sync.Once

	mu         sync.Mutex
	sandboxes  map[string]*sandbox
	containers map[string]*container
	names      map[string]string // reserved sandbox/container name → id
	images     map[string]*image // by name, by id and by normalized name
	ips        ipPool
	streams    map[*eventStream]struct{}
	byPod      podIndex
}

type method struct {
	calls   atomic.Int64
	latency time.Duration
}

// New returns a Server with opts. It serves nothing until Serve or Start.
func New(opts Options) *Server {
	if opts.EventBuffer <= 0 {
		opts.EventBuffer = 1024
	}
	if opts.FsMountpoint == "" {
		opts.FsMountpoint = "/"
	}
	s := &Server{
		opts:       opts,
		methods:    make(map[string]*method),
		sandboxes:  make(map[string]*sandbox),
		containers: make(map[string]*container),
		names:      make(map[string]string),
		images:     make(map[string]*image),
		ips:        newIPPool(opts.PodSubnet),
		streams:    make(map[*eventStream]struct{}),
		byPod:      newPodIndex(),
	}
	for _, name := range methodNames() {
		lat, ok := opts.Latency[name]
		if !ok {
			lat = opts.DefaultLatency
		}
		s.methods[name] = &method{latency: lat}
	}
	for _, name := range opts.Preloaded {
		s.addImageLocked(name)
	}
	s.grpc = grpc.NewServer(
		// Reused workers keep their grown stacks, where a goroutine per
		// call grows a new one each time (BenchmarkPodStartContainerdLike
		// on 2 cores: roughly 3,000 → 4,500 pods/s).
		grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0))),
		grpc.ChainUnaryInterceptor(s.unaryInterceptor),
		grpc.ChainStreamInterceptor(s.streamInterceptor),
	)
	runtimeapi.RegisterRuntimeServiceServer(s.grpc, s)
	runtimeapi.RegisterImageServiceServer(s.grpc, s)
	return s
}

// Serve serves both CRI services on l until Stop.
func (s *Server) Serve(l net.Listener) error {
	return s.grpc.Serve(l)
}

// Start listens on a unix socket at socketPath, replacing a stale socket
// file, and serves in the background. stop is Stop.
func (s *Server) Start(socketPath string) (stop func(), err error) {
	if err := os.MkdirAll(filepath.Dir(socketPath), 0o755); err != nil {
		return nil, fmt.Errorf("fake runtime socket dir: %w", err)
	}
	if fi, err := os.Lstat(socketPath); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("fake runtime: %s exists and is not a socket", socketPath)
		}
		if err := os.Remove(socketPath); err != nil {
			return nil, fmt.Errorf("remove stale socket: %w", err)
		}
	}
	l, err := net.Listen("unix", socketPath)
	if err != nil {
		return nil, fmt.Errorf("fake runtime listen: %w", err)
	}
	// Serve returns when Stop closes the listener; clients see the error.
	go s.Serve(l)
	return s.Stop, nil
}

// Stop closes all connections and streams at once (like a runtime that
// died) and cancels pending container exits. A stopped Server cannot serve
// again.
func (s *Server) Stop() {
	s.stop.Do(func() {
		s.grpc.Stop()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, c := range s.containers {
			c.stopTimer()
		}
	})
}

// Calls returns how many times method (e.g. "StartContainer") was called,
// failed calls included.
func (s *Server) Calls(method string) int64 {
	if m := s.methods[method]; m != nil {
		return m.calls.Load()
	}
	return 0
}

// DroppedEvents returns how many events were dropped because a stream's
// consumer fell behind.
func (s *Server) DroppedEvents() int64 { return s.dropped.Load() }

// EventStreams returns how many GetContainerEvents streams are open; tests
// wait for it before causing events they expect to see.
func (s *Server) EventStreams() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.streams)
}

// CallCounts returns how many times each CRI method was called, by name;
// methods never called are absent.
func (s *Server) CallCounts() map[string]int64 {
	out := make(map[string]int64)
	for name, m := range s.methods {
		if n := m.calls.Load(); n > 0 {
			out[name] = n
		}
	}
	return out
}

// Methods returns the names of every method of both CRI services, sorted:
// the names Options.Latency, Inject and Calls take.
func Methods() []string {
	names := methodNames()
	slices.Sort(names)
	return names
}

// methodNames lists every method of both CRI services.
func methodNames() []string {
	var names []string
	for _, d := range []grpc.ServiceDesc{runtimeapi.RuntimeService_ServiceDesc, runtimeapi.ImageService_ServiceDesc} {
		for _, m := range d.Methods {
			names = append(names, m.MethodName)
		}
		for _, st := range d.Streams {
			names = append(names, st.StreamName)
		}
	}
	return names
}
