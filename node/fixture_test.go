package node

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// fixture is a Heartbeat against a fake API server, with a clock and
// health the test moves by hand.
type fixture struct {
	t      *testing.T
	h      *Heartbeat
	client *fake.Clientset

	mu       sync.Mutex
	now      time.Time
	notReady error
	pressure Pressures
	events   []string
}

func testConfig() Config {
	capacity := Capacity(2, 8<<30, 100<<30, 110)
	return Config{
		Name:        "node-a",
		Labels:      map[string]string{"example.com/pool": "a"},
		Taints:      []v1.Taint{{Key: "dedicated", Value: "x", Effect: v1.TaintEffectNoSchedule}},
		Register:    true,
		Capacity:    capacity,
		Allocatable: Allocatable(capacity, v1.ResourceList{v1.ResourceCPU: *cpu("100m")}, nil, nil),
		Addresses:   Addresses([]string{"10.0.0.5"}, "node-a"),
		Info: v1.NodeSystemInfo{MachineID: "m1", BootID: "b1", KernelVersion: "6.18.0",
			ContainerRuntimeVersion: "containerd://1.7.27", KubeletVersion: "v0.0.0-podline",
			OperatingSystem: "linux", Architecture: goarch},
		UpdateFrequency: time.Hour, // the tests drive the checks themselves
	}
}

// newFixture builds a Heartbeat on testConfig changed by mutate, against
// a fake API server holding objects. Nodes it creates get a UID, as the
// real API server gives them.
func newFixture(t *testing.T, mutate func(*Config), objects ...runtime.Object) *fixture {
	t.Helper()
	f := &fixture{t: t, now: t0, client: fake.NewClientset(objects...)}
	f.client.PrependReactor("create", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		n := a.(k8stesting.CreateAction).GetObject().(*v1.Node)
		n.UID = types.UID("uid-" + n.Name)
		return false, nil, nil
	})
	cfg := testConfig()
	cfg.Client = f.client
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.Now = f.clock
	cfg.Ready = func() error { f.mu.Lock(); defer f.mu.Unlock(); return f.notReady }
	cfg.Pressure = func() Pressures { f.mu.Lock(); defer f.mu.Unlock(); return f.pressure }
	cfg.Record = func(eventType, reason, message string) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.events = append(f.events, reason)
	}
	if mutate != nil {
		mutate(&cfg)
	}
	h, err := NewHeartbeat(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.jitter = func() float64 { return 0.5 } // no spread: report exactly every period
	h.backoff = time.Millisecond
	f.h = h
	return f
}

func (f *fixture) clock() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now }

func (f *fixture) advance(d time.Duration) { f.mu.Lock(); f.now = f.now.Add(d); f.mu.Unlock() }

func (f *fixture) setReady(err error) { f.mu.Lock(); f.notReady = err; f.mu.Unlock() }

// takeEvents returns the events recorded since the last call.
func (f *fixture) takeEvents() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ev := f.events
	f.events = nil
	return ev
}

// node is the Node as the fake API server has it.
func (f *fixture) node() *v1.Node {
	f.t.Helper()
	n, err := f.client.CoreV1().Nodes().Get(context.Background(), "node-a", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// count is how many requests of verb on resource (and subresource) the
// fake API server saw.
func (f *fixture) count(verb, resource, subresource string) int {
	n := 0
	for _, a := range f.client.Actions() {
		if a.GetVerb() == verb && a.GetResource().Resource == resource && a.GetSubresource() == subresource {
			n++
		}
	}
	return n
}

// failing makes the next n requests of verb on resource fail with err.
func (f *fixture) failing(verb, resource string, n int, err error) {
	f.client.PrependReactor(verb, resource, func(k8stesting.Action) (bool, runtime.Object, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if n == 0 {
			return false, nil, nil
		}
		n--
		return true, nil, err
	})
}

func condition(t *testing.T, n *v1.Node, typ v1.NodeConditionType) v1.NodeCondition {
	t.Helper()
	c := findCondition(&n.Status, typ)
	if c == nil {
		t.Fatalf("node has no %s condition: %+v", typ, n.Status.Conditions)
	}
	return *c
}

func cpu(s string) *resource.Quantity { q := resource.MustParse(s); return &q }
