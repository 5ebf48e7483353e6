package fake

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// waitHung waits until n calls are blocked by a Hang, so a test knows
// the stuck call is in the runtime before it checks that others pass.
func waitHung(t *testing.T, srv *Server, n int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for srv.HungCalls() < n {
		if time.Now().After(deadline) {
			t.Fatalf("HungCalls = %d, want %d", srv.HungCalls(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestHangRunPodSandboxOnePodOthersGoOn(t *testing.T) {
	r := newRig(t, Options{Hangs: []Hang{{Method: "RunPodSandbox", Name: "stuck"}}})
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan error, 1)
	go func() {
		_, err := r.rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("stuck", nil)})
		done <- err
	}()
	waitHung(t, r.srv, 1)
	// The same method for another pod is not held up by the stuck one.
	id := r.runSandbox(t, sandboxConfig("other", nil))
	if got := r.sandboxStatus(t, id).Status.Metadata.Name; got != "other" {
		t.Fatalf("sandbox name %q, want other", got)
	}
	select {
	case err := <-done:
		t.Fatalf("hung call returned before its caller gave up: %v", err)
	default:
	}
	cancel()
	wantCode(t, <-done, codes.Canceled)
	// The hung call never reached the handler: no sandbox for it.
	list, err := r.rt.ListPodSandbox(r.ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Metadata.Name != "other" {
		t.Fatalf("sandboxes after the hang: %v, want only other", list.Items)
	}
}

func TestHangEndsAtCallerDeadline(t *testing.T) {
	r := newRig(t, Options{Hangs: []Hang{{Method: "RunPodSandbox", Name: "stuck"}}})
	ctx, cancel := context.WithTimeout(r.ctx, 50*time.Millisecond)
	defer cancel()
	_, err := r.rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("stuck", nil)})
	wantCode(t, err, codes.DeadlineExceeded)
	if got := r.srv.HungCalls(); got != 1 {
		t.Fatalf("HungCalls = %d, want 1", got)
	}
}

func TestHangContainerByPodAndName(t *testing.T) {
	f := func(hangName string, wantHungA, wantHungB bool) {
		t.Helper()
		r := newRig(t, Options{Hangs: []Hang{{Method: "ContainerStatus", Name: hangName}}})
		ids := map[string]string{}
		for _, pod := range []string{"a", "b"} {
			sb := r.runSandbox(t, sandboxConfig(pod, nil))
			ids[pod] = r.createContainer(t, sb, containerConfig("app", nil))
			// Other methods on the same container are not held up.
			r.startContainer(t, ids[pod])
		}
		for pod, want := range map[string]bool{"a": wantHungA, "b": wantHungB} {
			ctx, cancel := context.WithTimeout(r.ctx, 50*time.Millisecond)
			_, err := r.rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: ids[pod]})
			cancel()
			if want {
				wantCode(t, err, codes.DeadlineExceeded)
			} else if err != nil {
				t.Fatalf("hang %q: ContainerStatus of pod %s: %v, want an answer", hangName, pod, err)
			}
		}
	}
	f("b/app", false, true)
	f("app", true, true)
	f("c/app", false, false)
}

func TestHangCreateContainerByPod(t *testing.T) {
	r := newRig(t, Options{Hangs: []Hang{{Method: "CreateContainer", Name: "b/app"}}})
	a := r.runSandbox(t, sandboxConfig("a", nil))
	b := r.runSandbox(t, sandboxConfig("b", nil))
	r.createContainer(t, a, containerConfig("app", nil))
	ctx, cancel := context.WithTimeout(r.ctx, 50*time.Millisecond)
	defer cancel()
	_, err := r.rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: b, Config: containerConfig("app", nil)})
	wantCode(t, err, codes.DeadlineExceeded)
}

func TestSlowAddsToEveryCall(t *testing.T) {
	// No latency of its own: Slow alone must hold the call past its
	// caller's deadline.
	r := newRig(t, Options{Slow: 5 * time.Second})
	ctx, cancel := context.WithTimeout(r.ctx, 50*time.Millisecond)
	defer cancel()
	_, err := r.rt.Version(ctx, &runtimeapi.VersionRequest{})
	wantCode(t, err, codes.DeadlineExceeded)
}

func TestParseHang(t *testing.T) {
	f := func(in string, want Hang, wantErr bool) {
		t.Helper()
		got, err := ParseHang(in)
		if (err != nil) != wantErr {
			t.Fatalf("ParseHang(%q) error %v, want error %v", in, err, wantErr)
		}
		if got != want {
			t.Fatalf("ParseHang(%q) = %+v, want %+v", in, got, want)
		}
	}
	f("RunPodSandbox=bench-00042-bench", Hang{"RunPodSandbox", "bench-00042-bench"}, false)
	f("ContainerStatus=pod/app", Hang{"ContainerStatus", "pod/app"}, false)
	f("RunPodSandbox", Hang{}, true)
	f("RunPodSandbox=", Hang{}, true)
	f("RunPodSandbx=p", Hang{}, true)
}
