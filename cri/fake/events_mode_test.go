package fake

import (
	"errors"
	"io"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The event stream answers as each kind of runtime does: ended at once
// with no error (k8s.io/cri-client's fake), or Unimplemented (containerd
// 1.6).
func TestEventsModes(t *testing.T) {
	f := func(mode EventsMode, check func(error) bool) {
		t.Helper()
		r := newRig(t, Options{Events: mode})
		stream, err := r.rt.GetContainerEvents(r.ctx, &runtimeapi.GetEventsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		r.runSandbox(t, sandboxConfig("pod", nil))
		if _, err := stream.Recv(); !check(err) {
			t.Fatalf("%q: Recv = %v", mode, err)
		}
	}
	f(EventsEnd, func(err error) bool { return errors.Is(err, io.EOF) })
	f(EventsUnimplemented, func(err error) bool { return status.Code(err) == codes.Unimplemented })

	for _, s := range []string{"stream", "", "end", "unimplemented"} {
		if _, err := ParseEventsMode(s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ParseEventsMode("ends"); err == nil {
		t.Fatal(`"ends" accepted`)
	}
}
