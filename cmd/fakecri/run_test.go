package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/internal/podtest"
)

// TestRun starts the command on temporary sockets, drives a container
// through CRI and the control listener, and stops it as SIGTERM would.
func TestRun(t *testing.T) {
	dir, err := os.MkdirTemp("/tmp", "fakecri") // short: socket paths fit 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock, control := filepath.Join(dir, "cri.sock"), filepath.Join(dir, "control.sock")
	stale, err := net.Listen("unix", control)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close() // leaves a stale socket file behind, as a killed process does

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr podtest.LogBuffer // written by run, read by the test
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--listen", sock, "--control", control, "--zero-latency",
			"--latency", "StopPodSandbox=5ms", "--log-files=false", "--hang", "RunPodSandbox=stuck"}, &stderr)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(stderr.String(), "serving CRI") {
		if time.Now().After(deadline) {
			t.Fatalf("no start line; stderr: %q", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	line := stderr.String()
	if !strings.Contains(line, "unix://"+sock) || !strings.Contains(line, "zero with overrides: StopPodSandbox=5ms") ||
		!strings.Contains(line, "RunPodSandbox hangs for stuck (--hang)") ||
		strings.Count(line, "\n") != 1 {
		t.Fatalf("start line: %q", line)
	}

	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	img := runtimeapi.NewImageServiceClient(conn)
	v, err := rt.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil || v.RuntimeName != fake.RuntimeName {
		t.Fatalf("Version: %v %v", v, err)
	}
	if im, err := img.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: "busybox:1.36"}}); err != nil || im.Image == nil {
		t.Fatalf("preloaded busybox: %v %v", im, err)
	}
	sb, err := rt.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "p", Namespace: "default", Uid: "u"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := rt.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: &runtimeapi.ContainerConfig{
		Metadata: &runtimeapi.ContainerMetadata{Name: "app"}, Image: &runtimeapi.ImageSpec{Image: "busybox:1.36"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
		t.Fatal(err)
	}

	httpc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", control)
	}}}
	do := func(method, path string, wantStatus int) []byte {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, "http://control"+path, nil)
		resp, err := httpc.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		var body bytes.Buffer
		body.ReadFrom(resp.Body)
		if resp.StatusCode != wantStatus {
			t.Fatalf("%s %s: %s %q, want %d", method, path, resp.Status, body.String(), wantStatus)
		}
		return body.Bytes()
	}
	do("GET", "/healthz", http.StatusOK)
	do("POST", "/exit?container="+c.ContainerId+"&code=x", http.StatusBadRequest)
	do("GET", "/exit?container="+c.ContainerId, http.StatusMethodNotAllowed)
	do("POST", "/exit?container=nope", http.StatusNotFound)
	do("POST", "/exit?container="+c.ContainerId+"&code=7", http.StatusNoContent)
	st, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.ContainerId})
	if err != nil || st.Status.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.Status.ExitCode != 7 {
		t.Fatalf("after /exit: %v %v", st, err)
	}
	do("POST", "/exit?container="+c.ContainerId, http.StatusConflict)

	start := time.Now()
	if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.PodSandboxId}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 5*time.Millisecond {
		t.Fatalf("StopPodSandbox took %v, below its --latency of 5ms", took)
	}
	var calls map[string]int64
	if err := json.Unmarshal(do("GET", "/calls", http.StatusOK), &calls); err != nil {
		t.Fatal(err)
	}
	if calls["Version"] != 1 || calls["RunPodSandbox"] != 1 || calls["ContainerStatus"] != 1 || calls["StopPodSandbox"] != 1 {
		t.Fatalf("calls: %v", calls)
	}
	// --hang: the stuck pod's sandbox call blocks until its deadline,
	// and /hung counts it.
	hctx, hcancel := context.WithTimeout(ctx, 50*time.Millisecond)
	_, err = rt.RunPodSandbox(hctx, &runtimeapi.RunPodSandboxRequest{Config: &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "stuck", Namespace: "default", Uid: "s"},
	}})
	hcancel()
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("RunPodSandbox of the hung pod: %v, want DeadlineExceeded", err)
	}
	if got := strings.TrimSpace(string(do("GET", "/hung", http.StatusOK))); got != "1" {
		t.Fatalf("/hung = %q, want 1", got)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
	for _, p := range []string{sock, control} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Fatalf("%s left behind: %v", p, err)
		}
	}
}

func TestRunFailsOnBadSocket(t *testing.T) {
	dir := t.TempDir()
	notSocket := filepath.Join(dir, "file")
	if err := os.WriteFile(notSocket, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"--listen", notSocket}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("run on a plain file: %v", err)
	}
	if _, err := os.Stat(notSocket); err != nil {
		t.Fatalf("the plain file was touched: %v", err)
	}
}
