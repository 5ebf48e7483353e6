//go:build e2e

// Package e2e runs the podline binary against the real containerd + runc
// started by scripts/runtime.sh. It is not part of the unit tests: run it
// with `make test-e2e` (or `go test -tags e2e ./e2e/`), as root.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/cri"
	"github.com/podline/podline/internal/podtest"
)

const nodeName = "e2e"

var (
	podlineBin string
	endpoint   string
	runtime    *cri.Client
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if os.Geteuid() != 0 {
		fmt.Fprintln(os.Stderr, "e2e: must run as root (it drives containerd, runc and mounts)")
		return 1
	}
	endpoint = os.Getenv("CONTAINER_RUNTIME_ENDPOINT")
	if endpoint == "" {
		endpoint = "unix:///run/podline-dev/containerd.sock"
	}
	unlock, err := exclusiveRun(endpoint)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}
	defer unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	runtime, err = cri.Dial(ctx, endpoint, "", 30*time.Second)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: no runtime at %s (start it with scripts/runtime.sh up): %v\n", endpoint, err)
		return 1
	}
	defer runtime.Close()
	// PODLINE_E2E_PODLINE names a podline built beforehand: the cgroup v2
	// guest (scripts/vm.sh) has no Go toolchain and runs the host's build.
	if podlineBin = os.Getenv("PODLINE_E2E_PODLINE"); podlineBin == "" {
		dir, err := os.MkdirTemp("", "podline-e2e-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		podlineBin = filepath.Join(dir, "podline")
		build := exec.Command("go", "build", "-o", podlineBin, "../cmd/podline")
		build.Stdout, build.Stderr = os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: build podline: %v\n", err)
			return 1
		}
	}
	code := m.Run()
	removeCgroupRoot(e2eCgroupRoot)
	return code
}

// exclusiveRun waits until no other e2e run uses the runtime at
// endpoint, and holds it until unlock. Two runs at once would each take
// the other's pods for orphans (podline owns its runtime, as the kubelet
// does: every agent here is node "e2e") and share one cgroup root.
func exclusiveRun(endpoint string) (unlock func(), err error) {
	sock := strings.TrimPrefix(endpoint, "unix://")
	f, err := os.OpenFile(sock+".e2e.lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the runtime for this run: %w", err)
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		fmt.Fprintf(os.Stderr, "e2e: waiting for another e2e run to leave the runtime (%s)\n", f.Name())
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			f.Close()
			return nil, fmt.Errorf("lock the runtime for this run: %w", err)
		}
	}
	return func() { f.Close() }, nil
}

// e2eCgroupRoot is the tests' own --cgroup-root: podline never touches a
// cgroup it did not make, and neither do the tests.
const e2eCgroupRoot = "/podline-e2e"

// removeCgroupRoot removes the (empty, by now) cgroup tree under root from
// every hierarchy, deepest first.
func removeCgroupRoot(root string) {
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
			if err := os.Remove(dirs[i]); err != nil {
				fmt.Fprintf(os.Stderr, "e2e: cgroup left behind: %v\n", err)
			}
		}
	}
}

// agentFlags go to every podline the tests start, before each test's own
// flags: PODLINE_E2E_AGENT_FLAGS split at white space. scripts/vm.sh
// passes the cgroup driver of its guest's runtime here.
var agentFlags = strings.Fields(os.Getenv("PODLINE_E2E_AGENT_FLAGS"))

// timeScale stretches the waits for a pod (waitPod, waitGone) and for an
// agent to serve or stop: PODLINE_E2E_TIME_SCALE, 1 unless set. The
// emulated guest of scripts/vm.sh starts a pod in ~5 s where this host
// takes 0.2 s; what a test measures itself stays as written.
var timeScale = func() time.Duration {
	n, err := strconv.Atoi(os.Getenv("PODLINE_E2E_TIME_SCALE"))
	if err != nil || n < 1 {
		return 1
	}
	return time.Duration(n)
}()

// agent is one podline process with directories of its own.
type agent struct {
	t         *testing.T
	manifests string
	root      string
	logs      string
	cgroup    string
	port      int
	cmd       *exec.Cmd
	out       *podtest.LogBuffer
	done      chan struct{}
	extra     []string
}

// startAgent runs podline with the tests' directories; extra flags go
// last, so they override.
func startAgent(t *testing.T, extra ...string) *agent {
	t.Helper()
	base := t.TempDir()
	a := &agent{
		t:         t,
		manifests: filepath.Join(base, "manifests"),
		root:      filepath.Join(base, "root"),
		logs:      filepath.Join(base, "logs"),
		// A cgroup root of the tests' own: never touch cgroups podline did
		// not make.
		cgroup: e2eCgroupRoot,
		port:   freePort(t),
		extra:  extra,
	}
	if err := os.MkdirAll(a.manifests, 0o755); err != nil {
		t.Fatal(err)
	}
	a.start()
	t.Cleanup(a.cleanup)
	return a
}

func (a *agent) start() {
	a.t.Helper()
	a.out = &podtest.LogBuffer{}
	a.done = make(chan struct{})
	a.cmd = exec.Command(podlineBin,
		"--container-runtime-endpoint", endpoint,
		"--pod-manifest-path", a.manifests,
		"--file-check-frequency", "2s",
		"--root-dir", a.root,
		"--pod-logs-dir", a.logs,
		"--cgroup-root", a.cgroup,
		"--hostname-override", nodeName,
		"--read-only-port", fmt.Sprint(a.port),
		"--address", "127.0.0.1",
		"--healthz-port", "0",
		"--port", "0", // tests of the authenticated port give their own
	)
	a.cmd.Args = append(append(a.cmd.Args, agentFlags...), a.extra...)
	a.cmd.Stdout, a.cmd.Stderr = a.out, a.out
	if err := a.cmd.Start(); err != nil {
		a.t.Fatal(err)
	}
	go func() { a.cmd.Wait(); close(a.done) }()
	deadline := time.Now().Add(15 * time.Second * timeScale)
	for {
		if _, err := a.pods(); err == nil {
			return
		}
		select {
		case <-a.done:
			a.t.Fatalf("podline exited at start:\n%s", a.out.String())
		default:
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("podline did not serve /pods:\n%s", a.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill9 ends podline the hard way; its pods keep running.
func (a *agent) kill9() {
	a.cmd.Process.Signal(syscall.SIGKILL)
	<-a.done
}

// cleanup removes every manifest, waits for podline to tear the pods down
// and stops it, so the next test starts from an empty runtime.
func (a *agent) cleanup() {
	entries, _ := os.ReadDir(a.manifests)
	for _, e := range entries {
		os.Remove(filepath.Join(a.manifests, e.Name()))
	}
	// Waited for even when the test removed its manifests itself: a pod
	// still tearing down when podline stops is left to the next test's
	// agent, whose first listing would find it.
	deadline := time.Now().Add(60 * time.Second * timeScale)
	for {
		pods, err := a.pods()
		if err == nil && len(pods) == 0 && len(runtimePods(a.t, "")) == 0 {
			break
		}
		if err != nil || time.Now().After(deadline) {
			a.t.Logf("cleanup: stopping podline with pods left (%d in the runtime): %v", len(runtimePods(a.t, "")), err)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(10 * time.Second * timeScale):
		a.kill9()
	}
	if a.t.Failed() {
		a.t.Logf("podline output:\n%s", a.out.String())
	}
}

func (a *agent) pods() ([]v1.Pod, error) {
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/pods", a.port))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/pods: %s", resp.Status)
	}
	var list v1.PodList
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// waitPod polls /pods until the named static pod satisfies cond.
func (a *agent) waitPod(name, what string, timeout time.Duration, cond func(*v1.Pod) bool) *v1.Pod {
	a.t.Helper()
	full := name + "-" + nodeName
	timeout *= timeScale
	deadline := time.Now().Add(timeout)
	var last *v1.Pod
	for time.Now().Before(deadline) {
		pods, err := a.pods()
		if err != nil {
			a.t.Fatal(err)
		}
		for i := range pods {
			if pods[i].Name == full {
				last = &pods[i]
				if cond(last) {
					return last
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	a.t.Fatalf("pod %s did not become %s within %s; last: %s", full, what, timeout, describe(last))
	return nil
}

func (a *agent) waitRunning(name string, timeout time.Duration) *v1.Pod {
	a.t.Helper()
	return a.waitPod(name, "Running", timeout, func(p *v1.Pod) bool {
		if p.Status.Phase != v1.PodRunning {
			return false
		}
		for _, cs := range p.Status.ContainerStatuses {
			if cs.State.Running == nil {
				return false
			}
		}
		return true
	})
}

// waitGone waits until the pod is neither in /pods nor in the runtime.
func (a *agent) waitGone(name string, uid string, timeout time.Duration) {
	a.t.Helper()
	full := name + "-" + nodeName
	timeout *= timeScale
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		pods, err := a.pods()
		if err != nil {
			a.t.Fatal(err)
		}
		listed := false
		for _, p := range pods {
			listed = listed || p.Name == full
		}
		if !listed && len(runtimePods(a.t, uid)) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	a.t.Fatalf("pod %s still present after %s", full, timeout)
}

func (a *agent) writeManifest(file, content string) {
	a.t.Helper()
	// Write then rename, so the watcher never reads half a file.
	tmp := filepath.Join(a.manifests, "."+file+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		a.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(a.manifests, file)); err != nil {
		a.t.Fatal(err)
	}
}

func (a *agent) removeManifest(file string) {
	a.t.Helper()
	if err := os.Remove(filepath.Join(a.manifests, file)); err != nil {
		a.t.Fatal(err)
	}
}

// runtimePods lists the runtime's sandboxes of one pod UID (all when uid
// is empty).
func runtimePods(t *testing.T, uid string) []string {
	t.Helper()
	sbs, err := runtime.ListPodSandbox(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, sb := range sbs {
		if u := cri.PodUIDOf(sb.Labels); u != "" && (uid == "" || u == uid) {
			ids = append(ids, sb.Id)
		}
	}
	return ids
}

func describe(p *v1.Pod) string {
	if p == nil {
		return "not listed"
	}
	b, _ := json.Marshal(p.Status)
	return string(b)
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

// readLog returns a container's CRI log for its attempt.
func (a *agent) readLog(p *v1.Pod, container string, attempt int) string {
	dir := filepath.Join(a.logs, fmt.Sprintf("%s_%s_%s", p.Namespace, p.Name, p.UID), container)
	b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.log", attempt)))
	if err != nil {
		return ""
	}
	return string(b)
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
