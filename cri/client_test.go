package cri

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podline/podline/cri/fake"
	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestRoundTrip(t *testing.T) {
	c, srv := dialFake(t, fake.Options{}, time.Second)
	ctx := testCtx(t)

	v, err := c.Version(ctx)
	if err != nil || v.RuntimeName != fake.RuntimeName {
		t.Fatalf("Version: %v %v", v, err)
	}
	st, err := c.Status(ctx, false)
	if err != nil || len(st.Status.Conditions) != 2 || !st.Status.Conditions[0].Status {
		t.Fatalf("Status: %v %v", st, err)
	}

	events, err := c.ContainerEvents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitStreams(t, srv, 1)

	ref, err := c.PullImage(ctx, "busybox:1", nil, nil)
	if err != nil || ref == "" {
		t.Fatalf("PullImage: %q %v", ref, err)
	}
	if im, err := c.ImageStatus(ctx, "busybox:1"); err != nil || im.Id != ref {
		t.Fatalf("ImageStatus: %v %v", im, err)
	}
	if ims, err := c.ListImages(ctx, nil); err != nil || len(ims) != 1 {
		t.Fatalf("ListImages: %v %v", ims, err)
	}
	if fs, err := c.ImageFsInfo(ctx); err != nil || len(fs.ImageFilesystems) != 1 {
		t.Fatalf("ImageFsInfo: %v %v", fs, err)
	}

	cfg := podConfig("web")
	sb, err := c.RunPodSandbox(ctx, cfg, "")
	if err != nil {
		t.Fatal(err)
	}
	if sst, err := c.PodSandboxStatus(ctx, sb); err != nil || sst.State != runtimeapi.PodSandboxState_SANDBOX_READY || PodUIDOf(sst.Labels) != "uid-web" {
		t.Fatalf("PodSandboxStatus: %v %v", sst, err)
	}
	pods, err := c.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: map[string]string{LabelPodUID: "uid-web"}})
	if err != nil || len(pods) != 1 || pods[0].Id != sb {
		t.Fatalf("ListPodSandbox: %v %v", pods, err)
	}

	id, err := c.CreateContainer(ctx, sb, appConfig("app"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	cst, err := c.ContainerStatus(ctx, id)
	if err != nil || cst.State != runtimeapi.ContainerState_CONTAINER_RUNNING || ContainerNameOf(cst.Labels) != "app" ||
		cst.Annotations[AnnotationRestartCount] != "0" {
		t.Fatalf("ContainerStatus: %v %v", cst, err)
	}
	list, err := c.ListContainers(ctx, &runtimeapi.ContainerFilter{PodSandboxId: sb})
	if err != nil || len(list) != 1 || list[0].Id != id {
		t.Fatalf("ListContainers: %v %v", list, err)
	}
	out, err := c.ExecSync(ctx, id, []string{"echo", "hi"}, time.Second)
	if err != nil || string(out.Stdout) != "hi\n" || out.ExitCode != 0 {
		t.Fatalf("ExecSync: %v %v", out, err)
	}
	if cs, err := c.ListContainerStats(ctx, &runtimeapi.ContainerStatsFilter{Id: id}); err != nil || len(cs) != 1 {
		t.Fatalf("ListContainerStats: %v %v", cs, err)
	}
	if ps, err := c.ListPodSandboxStats(ctx, nil); err != nil || len(ps) != 1 || ps[0].Attributes.Id != sb {
		t.Fatalf("ListPodSandboxStats: %v %v", ps, err)
	}

	if err := c.StopContainer(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	if cst, _ := c.ContainerStatus(ctx, id); cst.State != runtimeapi.ContainerState_CONTAINER_EXITED {
		t.Fatalf("after StopContainer: %v", cst.State)
	}
	if err := c.RemoveContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := c.StopPodSandbox(ctx, sb); err != nil {
		t.Fatal(err)
	}
	if err := c.RemovePodSandbox(ctx, sb); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveImage(ctx, "busybox:1"); err != nil {
		t.Fatal(err)
	}
	if im, err := c.ImageStatus(ctx, "busybox:1"); im != nil || err != nil {
		t.Fatalf("ImageStatus of a removed image: %v %v, want nil, nil", im, err)
	}

	// sandbox created+started, container created/started/stopped/deleted,
	// sandbox stopped/deleted.
	var got []string
	for range 8 {
		ev, err := events.Recv()
		if err != nil {
			t.Fatal(err)
		}
		who := "c"
		if ev.ContainerId == sb {
			who = "s"
		}
		got = append(got, who+strings.TrimSuffix(strings.TrimPrefix(ev.ContainerEventType.String(), "CONTAINER_"), "_EVENT"))
	}
	want := "sCREATED sSTARTED cCREATED cSTARTED cSTOPPED cDELETED sSTOPPED sDELETED"
	if strings.Join(got, " ") != want {
		t.Fatalf("events %v, want %s", got, want)
	}
}

func TestDialEndpoints(t *testing.T) {
	sock, _ := fake.Listen(t, fake.Options{})
	ctx := testCtx(t)
	f := func(runtimeEP, imageEP string, sharedConn bool) {
		t.Helper()
		c, err := Dial(ctx, runtimeEP, imageEP, time.Second)
		if err != nil {
			t.Fatalf("Dial(%q, %q): %v", runtimeEP, imageEP, err)
		}
		defer c.Close()
		if (c.imageConn == c.runtimeConn) != sharedConn {
			t.Fatalf("Dial(%q, %q): shared connection = %v", runtimeEP, imageEP, !sharedConn)
		}
		if _, err := c.ImageFsInfo(ctx); err != nil {
			t.Fatalf("image service via %q: %v", imageEP, err)
		}
	}
	f("unix://"+sock, "", true)
	f(sock, "", true)
	f(sock, "unix://"+sock, true)
	// A second socket path to the same server still gets its own conn.
	link := filepath.Join(filepath.Dir(sock), "img.sock")
	if err := os.Symlink(sock, link); err != nil {
		t.Fatal(err)
	}
	f(sock, link, false)
}

func TestSocketPath(t *testing.T) {
	f := func(endpoint, want string, ok bool) {
		t.Helper()
		got, err := socketPath(endpoint)
		if (err == nil) != ok || got != want {
			t.Fatalf("socketPath(%q) = %q, %v; want %q, ok=%v", endpoint, got, err, want, ok)
		}
	}
	f("unix:///run/containerd/containerd.sock", "/run/containerd/containerd.sock", true)
	f("/run/crio/crio.sock", "/run/crio/crio.sock", true)
	f("", "", false)
	f("unix://", "", false)
	f("tcp://127.0.0.1:1234", "", false)
	f("npipe:////./pipe/x", "", false)
}

func TestDialFailsClearly(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nobody.sock")
	start := time.Now()
	_, err := Dial(testCtx(t), "unix://"+missing, "", 2*time.Second)
	if err == nil {
		t.Fatal("Dial of a missing socket succeeded")
	}
	if !IsUnavailable(err) || !strings.Contains(err.Error(), missing) {
		t.Fatalf("error does not say unavailable and name the endpoint: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("Dial took %v", took)
	}
}

func TestContainerEventsClassifyRecvErrors(t *testing.T) {
	c, srv := dialFake(t, fake.Options{}, time.Second)
	srv.Inject("GetContainerEvents", codes.Unimplemented, 1)
	stream, err := c.ContainerEvents(testCtx(t))
	if err == nil {
		_, err = stream.Recv()
	}
	if !errors.Is(err, ErrUnimplemented) || !strings.HasPrefix(err.Error(), "GetContainerEvents") {
		t.Fatalf("got %v, want GetContainerEvents ... unimplemented", err)
	}

	// A stream ended by its caller reports the caller's cancellation.
	ctx, cancel := context.WithCancel(testCtx(t))
	stream, err = c.ContainerEvents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waitStreams(t, srv, 1)
	cancel()
	_, err = stream.Recv()
	if !errors.Is(err, ErrCanceled) {
		t.Fatalf("Recv after cancel: %v, want class canceled", err)
	}
}

func waitStreams(t *testing.T, s *fake.Server, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for s.EventStreams() != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d event streams, want %d", s.EventStreams(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
