//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"
)

// For 20 s every request podline sends is refused: 10 s of 429 with
// Retry-After: 1, as API Priority and Fairness answers, then 10 s of 500
// (5 s each, and 5 s baselines, unless fullSize).
// A burst of pod creates and deletes lands just as it starts, so status
// writes and final deletes are refused. Invariants: podline does not
// exit, it backs off (its request rate stays under its own QPS limit,
// --kube-api-qps 50, the heartbeat's unthrottled client included), and
// the statuses converge once the API answers again. The rates before,
// during and after are logged.
func TestClusterFaultAPIErrors(t *testing.T) {
	const (
		steadyPods = 10
		burstPods  = 10
		deletes    = 3
		qpsLimit   = 50 // podline's --kube-api-qps default
	)
	phase := sized(10*time.Second, 5*time.Second)
	var proxy *faultProxy
	n := startNodeVia(t, func(cp *controlPlane, kubeconfig string) string {
		proxy = newFaultProxy(t, cp, kubeconfig)
		return proxy.kubeconfig(kubeconfig)
	})
	t.Logf("podline reaches the API server through %s", proxy)
	n.waitReady(60 * time.Second)
	steady := n.createPods("steady", steadyPods)
	n.waitConverged(podNames(steady), nil, 120*time.Second)
	// A node at rest with its pods running: the baseline.
	quiet := time.Now()
	time.Sleep(sized(15*time.Second, 5*time.Second))

	start := time.Now()
	proxy.setFault(&fault{code: 429, retryAfter: 1})
	burst := n.createPods("burst", burstPods)
	deleted := steady[:deletes]
	n.deletePodsNamed(deleted)
	time.Sleep(phase - time.Since(start))
	mid := time.Now()
	proxy.setFault(&fault{code: 500})
	time.Sleep(phase)
	proxy.setFault(nil)
	end := time.Now()

	live := append(podNames(steady[deletes:]), podNames(burst)...)
	took := n.waitConverged(live, podNames(deleted), 60*time.Second)
	converged := time.Now()
	t.Logf("faults off → %d live pods Running and Ready, %d deleted gone, in the API: %s",
		len(live), len(deleted), took.Round(100*time.Millisecond))
	time.Sleep(phase)
	select {
	case <-n.agent.done:
		t.Fatalf("podline exited:\n%s", n.agent.out.String())
	default:
	}

	rates := []rate{
		proxy.measure("before", quiet, start),
		proxy.measure("429 phase", start, mid),
		proxy.measure("500 phase", mid, end),
		proxy.measure("recovering", end, converged),
		proxy.measure("after", converged, time.Now()),
	}
	for _, r := range rates {
		t.Logf("%s", r)
	}
	t.Logf("podline's log about the API server:\n%s", strings.Join(n.agent.logLines(apiLogWords...), "\n"))
	for _, r := range rates[1:3] {
		if r.perSecond() > qpsLimit {
			t.Errorf("%s: %.1f requests/s, more than --kube-api-qps %d: podline does not back off", r.name, r.perSecond(), qpsLimit)
		}
	}
}
