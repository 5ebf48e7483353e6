package fake

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestRuntimeInfo(t *testing.T) {
	r := newRig(t, Options{LogFiles: true})
	v, err := r.rt.Version(r.ctx, &runtimeapi.VersionRequest{})
	// A kubelet refuses a runtime whose Version is not "0.1.0".
	if err != nil || v.Version != "0.1.0" || v.RuntimeName != RuntimeName || v.RuntimeApiVersion != "v1" || v.RuntimeVersion == "" {
		t.Fatalf("Version: %v %v", v, err)
	}

	st, err := r.rt.Status(r.ctx, &runtimeapi.StatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	ready := map[string]bool{}
	for _, c := range st.Status.Conditions {
		ready[c.Type] = c.Status
	}
	if !ready[runtimeapi.RuntimeReady] || !ready[runtimeapi.NetworkReady] {
		t.Fatalf("conditions: %v", st.Status.Conditions)
	}
	if len(st.RuntimeHandlers) != 1 || st.RuntimeHandlers[0].Name != "" || st.RuntimeHandlers[0].Features == nil || st.Features == nil {
		t.Fatalf("handlers %v features %v", st.RuntimeHandlers, st.Features)
	}
	if len(st.Info) != 0 {
		t.Fatalf("info without verbose: %v", st.Info)
	}
	st, err = r.rt.Status(r.ctx, &runtimeapi.StatusRequest{Verbose: true})
	var cfg struct {
		FsMountpoint string
		LogFiles     bool
	}
	if err != nil || json.Unmarshal([]byte(st.Info["config"]), &cfg) != nil || cfg.FsMountpoint != "/" || !cfg.LogFiles {
		t.Fatalf("verbose info: %v %v", st.GetInfo(), err)
	}

	rc, err := r.rt.RuntimeConfig(r.ctx, &runtimeapi.RuntimeConfigRequest{})
	if err != nil || rc.GetLinux().GetCgroupDriver() != runtimeapi.CgroupDriver_CGROUPFS {
		t.Fatalf("RuntimeConfig: %v %v", rc, err)
	}
}

// TestNoRoutineCallIsUnimplemented calls every CRI method with an empty
// request: each may refuse it, but only the streaming-server calls that a
// client makes on a user's request (exec, attach, port-forward) and
// checkpointing may answer Unimplemented.
func TestNoRoutineCallIsUnimplemented(t *testing.T) {
	sock, _ := Listen(t, Options{})
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	unimplemented := []string{"Exec", "Attach", "PortForward", "CheckpointContainer"}

	call := func(service, method string, stream bool) error {
		full := "/" + service + "/" + method
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if !stream {
			return conn.Invoke(ctx, full, &emptypb.Empty{}, &emptypb.Empty{})
		}
		st, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, full)
		if err != nil {
			return err
		}
		if err := st.SendMsg(&emptypb.Empty{}); err != nil {
			return err
		}
		if err := st.CloseSend(); err != nil {
			return err
		}
		for {
			if err := st.RecvMsg(&emptypb.Empty{}); err != nil {
				if errors.Is(err, io.EOF) || status.Code(err) == codes.DeadlineExceeded {
					return nil // finished, or still open (an event stream)
				}
				return err
			}
		}
	}
	checked := 0
	for _, d := range []grpc.ServiceDesc{runtimeapi.RuntimeService_ServiceDesc, runtimeapi.ImageService_ServiceDesc} {
		f := func(method string, stream bool) {
			t.Helper()
			err := call(d.ServiceName, method, stream)
			unimpl := status.Code(err) == codes.Unimplemented
			if want := slices.Contains(unimplemented, method); unimpl != want {
				t.Errorf("%s: err %v, want Unimplemented %t", method, err, want)
			}
			checked++
		}
		for _, m := range d.Methods {
			f(m.MethodName, false)
		}
		for _, s := range d.Streams {
			f(s.StreamName, true)
		}
	}
	if checked != len(Methods()) {
		t.Fatalf("checked %d methods of %d", checked, len(Methods()))
	}
}
