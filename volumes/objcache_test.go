package volumes

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// Pods starting together read a shared object once; a missing object is
// remembered as missing for the same time, and read again after it.
func TestObjectReadsAreCoalesced(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "kube-root-ca.crt"},
		Data: map[string]string{"ca.crt": "CA"}})
	s := startSource(t, cs, nil)
	clock := time.Now()
	var mu sync.Mutex
	s.reads.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	gets := func() int {
		n := 0
		for _, a := range cs.Actions() {
			if a.GetVerb() == "get" {
				n++
			}
		}
		return n
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			data, found, err := s.ConfigMap(ctx, "shop", "kube-root-ca.crt")
			if err != nil || !found || string(data["ca.crt"]) != "CA" {
				t.Errorf("read: %v %v %v", data, found, err)
			}
		})
	}
	wg.Wait()
	if n := gets(); n != 1 {
		t.Fatalf("50 concurrent reads made %d GETs, want 1", n)
	}
	if _, found, err := s.ConfigMap(ctx, "shop", "later"); found || err != nil {
		t.Fatalf("missing: %v %v", found, err)
	}
	if _, err := cs.CoreV1().ConfigMaps("shop").Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "later"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, found, _ := s.ConfigMap(ctx, "shop", "later"); found {
		t.Fatalf("a miss is remembered for %s", objectTTL)
	}
	mu.Lock()
	clock = clock.Add(objectTTL)
	mu.Unlock()
	if _, found, err := s.ConfigMap(ctx, "shop", "later"); !found || err != nil {
		t.Fatalf("after %s the new configMap is read: %v %v", objectTTL, found, err)
	}
	if n := gets(); n != 3 {
		t.Fatalf("%d GETs, want 3 (ca once, later twice)", n)
	}
}

// A reader that gives up (its pod's pass was cancelled) does not hand its
// context.Canceled to the others waiting on the same read: the read goes
// on under its own deadline, and each reader stops waiting on its own
// context only.
func TestCancelledReaderDoesNotFailOthers(t *testing.T) {
	c := newObjectCache(time.Now)
	key := configMapRef("shop", "settings")
	release := make(chan struct{})
	var deadlined bool
	fetch := func(ctx context.Context) (map[string][]byte, bool, error) {
		_, deadlined = ctx.Deadline()
		select {
		case <-release:
			return map[string][]byte{"k": []byte("v")}, true, nil
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
	first, cancelFirst := context.WithCancel(context.Background())
	firstErr := make(chan error, 1)
	go func() {
		_, _, err := c.get(first, key, fetch)
		firstErr <- err
	}()
	readers := func() int {
		c.mu.Lock()
		defer c.mu.Unlock()
		if o := c.objects[key]; o != nil {
			return o.readers
		}
		return 0
	}
	for readers() < 1 {
		time.Sleep(time.Millisecond)
	}
	type result struct {
		data  map[string][]byte
		found bool
		err   error
	}
	second := make(chan result, 1)
	go func() {
		data, found, err := c.get(context.Background(), key, func(context.Context) (map[string][]byte, bool, error) {
			t.Error("the second reader read again instead of joining the read in flight")
			return nil, false, nil
		})
		second <- result{data, found, err}
	}()
	// The second reader joins the read in flight before the first gives up.
	for readers() < 2 {
		time.Sleep(time.Millisecond)
	}
	cancelFirst()
	// The first reader stops waiting at once, with its own error, while
	// the read is still in flight.
	if err := <-firstErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("first reader: %v, want its own context.Canceled", err)
	}
	close(release)
	r := <-second
	if r.err != nil || !r.found || string(r.data["k"]) != "v" {
		t.Fatalf("second reader got %v %v %v, want the object", r.data, r.found, r.err)
	}
	if !deadlined {
		t.Error("the shared read runs without a deadline of its own")
	}
	// The answer is cached for later readers.
	if _, found, err := c.get(context.Background(), key, nil); !found || err != nil {
		t.Fatalf("later reader: %v %v", found, err)
	}
}

// A reader whose own context ends stops waiting even when the read it
// joined hangs; the read's own deadline then fails it for no one else.
func TestReaderStopsOnItsOwnContext(t *testing.T) {
	c := newObjectCache(time.Now)
	key := secretRef("shop", "token")
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	fetch := func(ctx context.Context) (map[string][]byte, bool, error) {
		<-hang
		return nil, false, errors.New("too late")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, _, err := c.get(ctx, key, fetch); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the reader's own deadline", err)
	}
}
