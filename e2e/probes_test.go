//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	v1 "k8s.io/api/core/v1"
)

// readiness tracks, per container, whether it was seen running and not
// ready before it was seen ready: the order a probe must give.
type readiness struct {
	unready map[string]bool
	ready   map[string]time.Duration
	start   time.Time
}

func newReadiness() *readiness {
	return &readiness{unready: map[string]bool{}, ready: map[string]time.Duration{}, start: time.Now()}
}

// observe records what p shows and reports whether every container named
// is ready.
func (r *readiness) observe(t *testing.T, p *v1.Pod, names ...string) bool {
	t.Helper()
	for _, cs := range p.Status.ContainerStatuses {
		switch {
		case cs.State.Running != nil && !cs.Ready:
			if _, done := r.ready[cs.Name]; done {
				t.Errorf("%s: ready, then not ready again", cs.Name)
			}
			r.unready[cs.Name] = true
		case cs.Ready:
			if _, done := r.ready[cs.Name]; !done {
				r.ready[cs.Name] = time.Since(r.start)
			}
		}
	}
	for _, n := range names {
		if _, ok := r.ready[n]; !ok {
			if c := podCondition(p, v1.PodReady); c != nil && c.Status == v1.ConditionTrue {
				t.Errorf("pod Ready while %s is not", n)
			}
			return false
		}
	}
	return true
}

// TestProbesReadiness: exec, HTTP (port by name) and TCP readiness probes
// on a pod-network pod. Each container is first seen running and not
// ready, then ready once what its probe checks exists (after 3 s); the
// pod is Ready only once all are.
func TestProbesReadiness(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("ready.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: ready
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: exec
    image: %[1]s
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3; touch /tmp/ready; while true; do sleep 1; done"]
    readinessProbe:
      exec: {command: ["cat", "/tmp/ready"]}
      periodSeconds: 1
  - name: http
    image: %[1]s
    command: ["sh", "-c", "trap 'exit 0' TERM; mkdir /www; httpd -p 8080 -h /www; sleep 3; echo ok > /www/ok; while true; do sleep 1; done"]
    ports: [{name: web, containerPort: 8080}]
    readinessProbe:
      httpGet: {path: /ok, port: web}
      periodSeconds: 1
  - name: tcp
    image: %[1]s
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 3; mkdir /www; httpd -p 9000 -h /www; while true; do sleep 1; done"]
    readinessProbe:
      tcpSocket: {port: 9000}
      periodSeconds: 1
`, busybox))
	r := newReadiness()
	p := a.waitPod("ready", "every container ready", 60*time.Second, func(p *v1.Pod) bool {
		return r.observe(t, p, "exec", "http", "tcp")
	})
	for _, c := range []string{"exec", "http", "tcp"} {
		if !r.unready[c] {
			t.Errorf("%s was never seen running and not ready", c)
		}
		t.Logf("%s ready %s after the manifest was written", c, r.ready[c].Round(time.Millisecond))
		if r.ready[c] < 3*time.Second {
			t.Errorf("%s ready after %s, before what its probe checks existed", c, r.ready[c])
		}
	}
	if c := podCondition(p, v1.PodReady); c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("pod Ready = %+v with every container ready", c)
	}
	if c := podCondition(p, v1.ContainersReady); c == nil || c.Status != v1.ConditionTrue {
		t.Errorf("ContainersReady = %+v with every container ready", c)
	}
}

// TestProbesGRPCReadiness: a host-network pod's gRPC readiness probe goes
// to the node's address, here to a grpc.health.v1 server of the test's:
// NOT_SERVING keeps the container unready, SERVING makes it ready.
func TestProbesGRPCReadiness(t *testing.T) {
	lis, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	hs.SetServingStatus("podline", healthpb.HealthCheckResponse_NOT_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	port := lis.Addr().(*net.TCPAddr).Port

	a := startAgent(t)
	a.writeManifest("grpc.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: grpc
spec:
  hostNetwork: true
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: %s
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
    readinessProbe:
      grpc: {port: %d, service: podline}
      periodSeconds: 1
`, busybox, port))
	r := newReadiness()
	a.waitPod("grpc", "running and not ready", 60*time.Second, func(p *v1.Pod) bool {
		r.observe(t, p, "app")
		return r.unready["app"]
	})
	time.Sleep(2 * time.Second) // two probe periods: still not ready
	a.waitPod("grpc", "still not ready", time.Second, func(p *v1.Pod) bool { return !r.observe(t, p, "app") })
	serving := time.Now()
	hs.SetServingStatus("podline", healthpb.HealthCheckResponse_SERVING)
	a.waitPod("grpc", "ready", 10*time.Second, func(p *v1.Pod) bool { return r.observe(t, p, "app") })
	t.Logf("SERVING → ready in /pods: %s", time.Since(serving).Round(time.Millisecond))
}

// TestProbesLivenessRestarts: a liveness probe that starts failing gets
// the container stopped and, under restartPolicy Always, started again:
// the restart count and lastState show it.
func TestProbesLivenessRestarts(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("live.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: live
spec:
  terminationGracePeriodSeconds: 5
  containers:
  - name: app
    image: %s
    command: ["sh", "-c", "touch /tmp/alive; sleep 3; rm /tmp/alive; exec sleep 3600"]
    livenessProbe:
      exec: {command: ["cat", "/tmp/alive"]}
      periodSeconds: 1
      failureThreshold: 2
      terminationGracePeriodSeconds: 1
`, busybox))
	first := a.waitRunning("live", 30*time.Second)
	id := first.Status.ContainerStatuses[0].ContainerID
	p := a.waitPod("live", "restarted by its liveness probe", 60*time.Second, func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses[0]
		return cs.RestartCount >= 1 && cs.State.Running != nil && cs.ContainerID != id
	})
	cs := p.Status.ContainerStatuses[0]
	last := cs.LastTerminationState.Terminated
	if last == nil || last.ContainerID != id || last.ExitCode != 137 {
		// sleep as PID 1 ignores SIGTERM: the probe's grace ends in SIGKILL.
		t.Fatalf("lastState = %+v, want the killed instance %s with exit code 137", cs.LastTerminationState, id)
	}
	t.Logf("killed after %s running (probe failing from 3 s, 2 failures at 1 s), restarted at %s",
		last.FinishedAt.Sub(last.StartedAt.Time), cs.State.Running.StartedAt.Time.Sub(last.FinishedAt.Time))
	if d := last.FinishedAt.Sub(last.StartedAt.Time); d < 3*time.Second || d > 10*time.Second {
		t.Errorf("killed %s after it started; the probe fails from 3 s, twice at 1 s, grace 2 s", d)
	}
}

// TestProbesStartupGatesLiveness: a liveness probe that fails until the
// application is up (4 s) would kill it at once; a startup probe holds it
// back until it passes, so the container is never restarted, and is
// started only then.
func TestProbesStartupGatesLiveness(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("startup.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: startup
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: %s
    command: ["sh", "-c", "trap 'exit 0' TERM; sleep 4; touch /tmp/up; while true; do sleep 1; done"]
    startupProbe:
      exec: {command: ["cat", "/tmp/up"]}
      periodSeconds: 1
      failureThreshold: 30
    livenessProbe:
      exec: {command: ["cat", "/tmp/up"]}
      periodSeconds: 1
      failureThreshold: 1
`, busybox))
	written := time.Now()
	notStarted := false
	a.waitPod("startup", "started", 60*time.Second, func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses[0]
		if cs.State.Running != nil && (cs.Started == nil || !*cs.Started) {
			notStarted = true
		}
		return cs.Started != nil && *cs.Started
	})
	t.Logf("started (startup probe passed) %s after the manifest was written", time.Since(written).Round(time.Millisecond))
	if !notStarted {
		t.Error("the container was never seen running and not started")
	}
	time.Sleep(3 * time.Second)
	p := a.waitPod("startup", "still running", time.Second, func(*v1.Pod) bool { return true })
	if cs := p.Status.ContainerStatuses[0]; cs.RestartCount != 0 || cs.State.Running == nil || !cs.Ready {
		t.Fatalf("after the startup probe passed: %s", describe(p))
	}
}
