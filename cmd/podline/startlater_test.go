package main

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

// startLater keeps trying a start that fails while a resource is short
// (EMFILE, as inotify_init1 at the instance limit) and returns what the
// first success made; it gives up when its context ends.
func TestStartLater(t *testing.T) {
	calls := 0
	got, err := startLater(context.Background(), time.Millisecond, func() (string, error) {
		calls++
		if calls < 3 {
			return "", syscall.EMFILE
		}
		return "made", nil
	})
	if err != nil || got != "made" || calls != 3 {
		t.Fatalf("startLater = %q, %v after %d calls; want made after 3", got, err, calls)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err = startLater(ctx, time.Millisecond, func() (int, error) { return 0, syscall.EMFILE })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("startLater on a short resource after its context ended: %v", err)
	}
}
