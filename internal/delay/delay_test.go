package delay

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestFiresInOrderKeepingTheEarliest(t *testing.T) {
	var mu sync.Mutex
	var got []string
	fired := make(chan struct{}, 10)
	q := New(func(k string) {
		mu.Lock()
		got = append(got, k)
		mu.Unlock()
		fired <- struct{}{}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go q.Run(ctx)
	q.After("late", 60*time.Millisecond)
	q.After("early", 20*time.Millisecond)
	q.After("late", 200*time.Millisecond) // later than pending: ignored
	q.After("gone", 30*time.Millisecond)
	q.Cancel("gone")
	q.After("sooner", time.Hour)
	q.After("sooner", 40*time.Millisecond) // earlier than pending: moves up
	for range 3 {
		select {
		case <-fired:
		case <-time.After(2 * time.Second):
			t.Fatal("timed out")
		}
	}
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || got[0] != "early" || got[1] != "sooner" || got[2] != "late" {
		t.Fatalf("fired %v, want [early sooner late]", got)
	}
	if q.Pending() != 0 {
		t.Fatalf("pending = %d", q.Pending())
	}
}
