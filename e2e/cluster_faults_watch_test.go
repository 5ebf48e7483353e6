//go:build e2e

package e2e

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// podline's watch of its pods is cut, and the watch it resumes from the
// resourceVersion it had reached is answered with 410 Expired, as after
// etcd compaction. Invariants: podline lists its pods again, a pod created
// afterwards reaches Running in the API, and the pod that ran before is
// not touched.
func TestClusterFaultWatchExpired(t *testing.T) {
	var proxy *faultProxy
	n := startNodeVia(t, func(cp *controlPlane, kubeconfig string) string {
		proxy = newFaultProxy(t, cp, kubeconfig)
		return proxy.kubeconfig(kubeconfig)
	}, "--v=4") // the reflector says why its watch closed at V(4)
	n.waitReady(60 * time.Second)
	first := n.createPod(n.apiPod("before-410", "while true; do sleep 1; done"))
	n.waitConverged([]string{first.Name}, nil, 60*time.Second)
	uid := string(first.UID)
	sandboxes, containers := runtimePods(t, uid), runningContainers(t, uid)

	cut := time.Now()
	proxy.expireWatch()
	select {
	case <-proxy.expired:
	case <-time.After(60 * time.Second):
		t.Fatal("podline did not resume its pod watch within 60 s of the cut")
	}
	expired := time.Now()
	t.Logf("watch cut → resumed and answered 410 Expired: %s", expired.Sub(cut).Round(time.Millisecond))

	var relist proxyRequest
	eventually100ms(t, 60*time.Second, "podline lists its pods again after the 410", func() (bool, string) {
		for _, q := range proxy.between(expired, time.Now()) {
			if isPodList(q) {
				relist = q
				return true, ""
			}
		}
		return false, "no list of the node's pods yet"
	})
	t.Logf("410 → relist (%s /api/v1/pods?%s): %s", relist.method, relist.query, relist.at.Sub(expired).Round(time.Millisecond))

	second := n.createPod(n.apiPod("after-410", "while true; do sleep 1; done"))
	took := n.waitConverged([]string{first.Name, second.Name}, nil, 60*time.Second)
	t.Logf("pod created after the relist → Running and Ready in the API: %s", took.Round(100*time.Millisecond))

	if now := runtimePods(t, uid); len(now) != 1 || now[0] != sandboxes[0] {
		t.Errorf("sandbox of %s changed across the relist: %v → %v", first.Name, sandboxes, now)
	}
	if now := runningContainers(t, uid); len(now) != 1 || now[0] != containers[0] {
		t.Errorf("container of %s changed across the relist: %v → %v", first.Name, containers, now)
	}
	said := n.agent.logLines("podline-api-pods", "too old resource version")
	t.Logf("podline's log about its pod watch (%d lines):\n%s", len(said), strings.Join(said, "\n"))
}

// isPodList: a list of the node's pods, a plain LIST or a watch that
// starts with the current pods (watch-list).
func isPodList(q proxyRequest) bool {
	if q.path != "/api/v1/pods" {
		return false
	}
	v, _ := url.ParseQuery(q.query)
	if !strings.HasPrefix(v.Get("fieldSelector"), "spec.nodeName=") {
		return false
	}
	return !q.watch || v.Get("sendInitialEvents") == "true"
}
