package pleg

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/internal/podtest"
)

// A stream that comes back after it broke says so at INFO, once per
// outage and with how long it was down; the first connection and the
// failed attempts in between say nothing at INFO.
func TestCRIEventsLogsReconnect(t *testing.T) {
	const ms = time.Millisecond
	rt := &scriptRuntime{steps: []step{
		{openErr: errDown}, {openErr: errDown}, // not connected yet
		{hold: 20 * ms, end: io.EOF}, // first connection, breaks
		{openErr: errDown}, {openErr: errDown},
		{hold: 20 * ms, end: io.EOF}, // back, breaks again
		// then a stream that stays open
	}}
	var out podtest.LogBuffer
	log := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelInfo}))
	s := NewCRIEvents(rt, NewCache(), func(types.UID) {}, func(context.Context) error { return nil }, log)
	s.minBackoff, s.maxBackoff = 1*ms, 2*ms
	s.deadWithin = 10 * ms // the streams lived before they broke

	runEvents(t, s)
	// A connection is said after it counts as connected, before it is
	// read: once the last stream is read, every line about it is out.
	waitFor(t, "the last stream", 2*time.Second, func() bool {
		return rt.openCount() == 7 && s.Connected() && rt.readingStream() == 7
	})
	got := out.Lines("container event stream reconnected")
	if len(got) != 2 {
		t.Fatalf("%d reconnect lines, want 2 (two outages after the first connection):\n%s", len(got), strings.Join(got, "\n"))
	}
	for _, l := range got {
		if !strings.Contains(l, "level=INFO") || !strings.Contains(l, " down=") {
			t.Fatalf("reconnect line %q: want level INFO and the time it was down", l)
		}
	}
	if n := len(out.Lines("container event stream connected")); n != 0 {
		t.Fatalf("the first connection logged at INFO %d times, want only at debug", n)
	}
}
