package stages_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/stages"
)

// TestStopWithPassesInFlight stops the pipeline while workers are handling
// passes and a producer is parked on the full window. A worker that finishes
// its step after the stop still hands the pass on; that hand-off must not
// fail (it used to panic on a closed queue), and the producer must be
// released.
func TestStopWithPassesInFlight(t *testing.T) { eachQueue(t, testStopWithPassesInFlight) }

func testStopWithPassesInFlight(t *testing.T, q stages.QueueKind) {
	for round := range 5 {
		h := newHarness(t, harnessOpts{queue: q, window: 16, fake: fake.Options{DefaultLatency: time.Millisecond}})
		produced := make(chan struct{})
		go func() {
			defer close(produced)
			for i := range 200 {
				h.pipe.Upsert(testPod(fmt.Sprintf("stop-%d-%03d", round, i)))
			}
		}()
		// 200 pods through a window of 16 at 1ms per runtime call take
		// well over 60ms: stopping 10ms after the first pass started hits
		// passes mid-stage.
		deadline := time.Now().Add(5 * time.Second)
		for h.pipe.Idle() {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: no pass started", round)
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(10 * time.Millisecond)
		stopped := make(chan struct{})
		go func() { h.stop(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: pipeline did not stop", round)
		}
		select {
		case <-produced:
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: producer still parked on the window after the stop", round)
		}
	}
}
