package pleg

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestUntilNextRelist(t *testing.T) {
	now := time.Now()
	f := func(last *time.Time, want time.Duration) {
		t.Helper()
		if got := untilNextRelist(last, now, time.Minute); got != want {
			t.Fatalf("last %v: wait %v, want %v", last, got, want)
		}
	}
	ago := func(d time.Duration) *time.Time { at := now.Add(-d); return &at }
	f(nil, 0)
	f(ago(20*time.Second), 40*time.Second)
	f(ago(time.Minute), 0)
	f(ago(2*time.Minute), -time.Minute)
}

// countingLister counts listings.
type countingLister struct {
	emptyRuntime
	lists atomic.Int32
}

func (c *countingLister) ListPodSandbox(ctx context.Context, f *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	c.lists.Add(1)
	return nil, nil
}

// The periodic relist waits a period from the last relist of any kind: a
// runtime without an event stream is resynced every minute in its stead,
// and the 5-minute safety relist on top of that listed 10,000 pods for
// nothing. Here resyncs come every 100 ms against a 1 s period: no
// periodic relist runs between them.
func TestPeriodicRelistWaitsAfterAResync(t *testing.T) {
	rt := &countingLister{}
	r := NewRelister(rt, NewCache(), time.Second, func(types.UID) {}, quietLog())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	defer func() { cancel(); <-done }()

	resyncs := int32(0)
	for range 25 {
		if err := r.Resync(ctx); err != nil {
			t.Fatal(err)
		}
		resyncs++
		time.Sleep(100 * time.Millisecond)
	}
	if got := rt.lists.Load(); got != resyncs {
		t.Fatalf("%d listings for %d resyncs: the periodic relist ran between them", got, resyncs)
	}
	// Left alone, it relists a period after the last.
	waitFor(t, "the periodic relist", 5*time.Second, func() bool { return rt.lists.Load() == resyncs+1 })
}
