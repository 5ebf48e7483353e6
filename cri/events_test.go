package cri

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/podline/podline/cri/fake"
)

// An event stream opened while the runtime is down opens once the runtime
// is back, where every other call fails at once: its reconnection is what
// tells podline the runtime answers again.
func TestContainerEventsOpenWaitsForTheRuntime(t *testing.T) {
	sock, srv := fake.Listen(t, fake.Options{})
	c, err := Dial(testCtx(t), "unix://"+sock, "", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })

	stopRuntime(t, c, srv)

	type opened struct {
		err error
		at  time.Time
	}
	done := make(chan opened, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		_, err := c.ContainerEvents(ctx)
		done <- opened{err, time.Now()}
	}()

	// The runtime comes back on the same socket.
	back := fake.New(fake.Options{})
	stop, err := back.Start(sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	restarted := time.Now()
	r := <-done
	if r.err != nil {
		t.Fatalf("ContainerEvents across the restart: %v, want a stream from the runtime that came back", r.err)
	}
	if r.at.Before(restarted) {
		t.Fatal("the stream opened before the runtime was back")
	}
	// The stream is the new runtime's.
	waitStreams(t, back, 1)
}

// An open waiting for the runtime ends with its context.
func TestContainerEventsOpenEndsWithContext(t *testing.T) {
	c, srv := dialFake(t, fake.Options{}, time.Second)
	stopRuntime(t, c, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.ContainerEvents(ctx)
	if err == nil || !strings.HasPrefix(err.Error(), "GetContainerEvents") || !(errors.Is(err, ErrDeadline) || errors.Is(err, ErrCanceled)) {
		t.Fatalf("open with the runtime gone: %v, want GetContainerEvents ... deadline exceeded", err)
	}
}

// stopRuntime stops srv and waits until c has seen it go: an ordinary
// call fails at once.
func stopRuntime(t *testing.T, c *Client, srv *fake.Server) {
	t.Helper()
	srv.Stop()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := c.Version(testCtx(t))
		if errors.Is(err, ErrUnavailable) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Version with the runtime stopped: %v, want class unavailable", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
