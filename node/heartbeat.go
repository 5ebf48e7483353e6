package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Defaults of the kubelet flags of the same names.
const (
	DefaultUpdateFrequency = 10 * time.Second // --node-status-update-frequency
	DefaultReportFrequency = 5 * time.Minute  // --node-status-report-frequency
	DefaultLeaseDuration   = 40 * time.Second // --node-lease-duration-seconds
	DefaultKubeletPort     = 10250
)

// Config is what the heartbeat says about the node and how often. Maps and
// slices are copied into each Node podline sends, never kept by reference
// in one; the caller must not change them after NewHeartbeat.
type Config struct {
	Client kubernetes.Interface
	// Name is the Node's name; Hostname goes into the kubernetes.io/hostname
	// label and defaults to Name.
	Name, Hostname string
	// Labels (--node-labels, from ParseLabels) go over the default labels
	// when the Node is created. Taints (--register-with-taints) too.
	Labels map[string]string
	Taints []v1.Taint
	// Register creates the Node if it does not exist (--register-node).
	// Without it, podline only updates the status of a Node someone made.
	Register bool
	// Capacity must hold cpu, memory, pods and ephemeral-storage, or the
	// node reports NotReady saying which is missing.
	Capacity, Allocatable v1.ResourceList
	Addresses             []v1.NodeAddress
	Info                  v1.NodeSystemInfo
	// KubeletPort is where the API server reaches podline's server for
	// logs and exec (status.daemonEndpoints); DefaultKubeletPort if zero.
	KubeletPort int32
	// UpdateFrequency is how often the status is computed, ReportFrequency
	// the longest time between two writes of an unchanged status,
	// LeaseDuration the lease's duration (renewed every quarter of it).
	// Zero means the default.
	UpdateFrequency, ReportFrequency, LeaseDuration time.Duration
	// Ready returns nil when the node can run pods, else why not. Nil
	// means always ready.
	Ready func() error
	// Pressure returns the pressure conditions; nil means none. It is
	// called from one goroutine only.
	Pressure func() Pressures
	// Record, if set, receives node events ("NodeReady", "NodeHasDiskPressure").
	Record func(eventType, reason, message string)
	Log    *slog.Logger
	// Now is the clock; time.Now if nil.
	Now func() time.Time
}

// Heartbeat registers the node and keeps its status and lease current.
type Heartbeat struct {
	cfg  Config
	kick chan struct{}
	// node is the newest Node seen from the API server, nil until known.
	node       atomic.Pointer[v1.Node]
	registered atomic.Bool

	// Owned by the status loop.
	lastReport  time.Time
	reportDelay time.Duration
	// declaredDropped: the API server dropped status.declaredFeatures
	// from a write, so podline stops offering them.
	declaredDropped bool
	jitter          func() float64 // in [0, 1)
	// Owned by the lease loop.
	lease *coordinationv1.Lease
	// backoff is the first wait after a failed registration or lease
	// creation; it doubles up to maxBackoff.
	backoff time.Duration
}

const (
	// statusRetries is how many times one status check tries to write
	// before it waits for the next tick.
	statusRetries = 5
	// leaseRetries is how many times one renewal tries.
	leaseRetries = 5
	maxBackoff   = 7 * time.Second
)

// NewHeartbeat checks cfg and fills in the defaults.
func NewHeartbeat(cfg Config) (*Heartbeat, error) {
	if cfg.Client == nil || cfg.Name == "" {
		return nil, errors.New("node heartbeat: need a client and a node name")
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&cfg.UpdateFrequency, DefaultUpdateFrequency}, {&cfg.ReportFrequency, DefaultReportFrequency}, {&cfg.LeaseDuration, DefaultLeaseDuration}} {
		if *d.v < 0 {
			return nil, fmt.Errorf("node heartbeat: negative period %v", *d.v)
		}
		if *d.v == 0 {
			*d.v = d.def
		}
	}
	if cfg.LeaseDuration < time.Second {
		return nil, fmt.Errorf("node heartbeat: lease duration %v is under a second", cfg.LeaseDuration)
	}
	if cfg.Hostname == "" {
		cfg.Hostname = cfg.Name
	}
	if cfg.KubeletPort == 0 {
		cfg.KubeletPort = DefaultKubeletPort
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Heartbeat{cfg: cfg, kick: make(chan struct{}, 1), jitter: rand.Float64, backoff: 100 * time.Millisecond}, nil
}

// Run registers the node (with Register) and keeps its status and lease
// current until ctx ends. Failures to reach the API server are logged and
// retried, never returned: pods keep running without it. The lease is
// renewed from the start, independently of the status.
func (h *Heartbeat) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { h.runLease(ctx) })
	h.runStatus(ctx)
	wg.Wait()
}

// Kick asks for a status check now, for when readiness or pressure
// changed; the status is written only if it differs. It never blocks.
func (h *Heartbeat) Kick() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// Registered says whether the Node is known to exist: registration
// succeeded or, without Register, the status loop found it.
func (h *Heartbeat) Registered() bool { return h.registered.Load() }

// NodeUID is the Node's UID, "" until it is known.
func (h *Heartbeat) NodeUID() types.UID {
	if n := h.node.Load(); n != nil {
		return n.UID
	}
	return ""
}

// Node is the newest Node seen from the API server (at most one update
// period old), or nil; admission reads its labels. The caller must not
// modify it.
func (h *Heartbeat) Node() *v1.Node { return h.node.Load() }

func (h *Heartbeat) health() Health {
	var hl Health
	if h.cfg.Ready != nil {
		hl.Ready = h.cfg.Ready()
	}
	if h.cfg.Pressure != nil {
		hl.Pressures = h.cfg.Pressure()
	}
	return hl
}

func (h *Heartbeat) record(events []string) {
	if h.cfg.Record == nil {
		return
	}
	for _, reason := range events {
		h.cfg.Record(v1.EventTypeNormal, reason, fmt.Sprintf("Node %s status is now: %s", h.cfg.Name, reason))
	}
}

// sleep waits d or until ctx ends, and says whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
