package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/cri/fake"
)

// The whole agent as wired in cmd/, against the fake CRI: a manifest
// becomes a Running pod in /pods, its removal removes it, and cancelling
// the context stops podline promptly.
func TestAgentRunsStaticPods(t *testing.T) {
	sock, srv := fake.Listen(t, fake.Options{})
	dir := t.TempDir()
	manifests := filepath.Join(dir, "manifests")
	os.MkdirAll(manifests, 0o755)
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{
			"--container-runtime-endpoint", "unix://" + sock,
			"--pod-manifest-path", manifests,
			"--root-dir", filepath.Join(dir, "root"),
			"--pod-logs-dir", filepath.Join(dir, "logs"),
			"--hostname-override", "Node-A",
			"--cgroup-root", testCgroupRoot(t),
			"--healthz-port", "0", "--port", "0",
			"--read-only-port", fmt.Sprint(port), "--address", "127.0.0.1",
			"--relist-period", "100ms",
		})
	}()
	os.WriteFile(filepath.Join(manifests, "web.yaml"), []byte(`apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - {name: app, image: "busybox:1.36"}
`), 0o644)
	pods := func() []v1.Pod {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/pods", port))
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		var l v1.PodList
		json.NewDecoder(resp.Body).Decode(&l)
		return l.Items
	}
	waitUntil(t, "web Running", func() bool {
		p := pods()
		return len(p) == 1 && p[0].Name == "web-node-a" && p[0].Status.Phase == v1.PodRunning
	})
	os.Remove(filepath.Join(manifests, "web.yaml"))
	waitUntil(t, "web removed", func() bool { return len(pods()) == 0 && srv.Calls("RemovePodSandbox") > 0 })

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit code %d", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("podline did not stop within 5s of its context ending")
	}
}

func TestAgentStopsWhenAPortIsBusy(t *testing.T) {
	sock, srv := fake.Listen(t, fake.Options{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dir := t.TempDir()
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{
			"--container-runtime-endpoint", "unix://" + sock,
			"--pod-manifest-path", dir, "--root-dir", dir, "--pod-logs-dir", dir,
			"--cgroup-root", testCgroupRoot(t),
			"--healthz-port", "0", "--port", "0",
			"--read-only-port", fmt.Sprint(l.Addr().(*net.TCPAddr).Port), "--address", "127.0.0.1",
		})
	}()
	select {
	case code := <-done:
		if code != 1 {
			t.Fatalf("exit code %d, want 1", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("podline hung on a busy port")
	}
	if n := srv.Calls("ListPodSandbox"); n != 0 {
		t.Fatalf("podline touched the runtime (%d lists) before its ports were up", n)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// testCgroupRoot is a cgroup root of the test's own, removed afterwards:
// podline makes its QoS cgroups there, and never touches others.
func testCgroupRoot(t *testing.T) string {
	root := fmt.Sprintf("/podline-cmd-test-%d", os.Getpid())
	t.Cleanup(func() {
		hier, _ := filepath.Glob("/sys/fs/cgroup/*")
		for _, h := range hier {
			var dirs []string
			filepath.WalkDir(filepath.Join(h, root), func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					dirs = append(dirs, p)
				}
				return nil
			})
			for i := len(dirs) - 1; i >= 0; i-- {
				os.Remove(dirs[i])
			}
		}
	})
	return root
}
