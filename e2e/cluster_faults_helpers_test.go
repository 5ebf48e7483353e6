//go:build e2e

package e2e

// Helpers of the API server fault tests (cluster_faults_*_test.go): pods
// made and deleted in bulk, the wait for the API server's view of them to
// converge, and requests per second from what the fault proxy saw.

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// createPods makes count sleeping pods prefix-0, prefix-1, ... on the node.
func (n *clusterNode) createPods(prefix string, count int) []*v1.Pod {
	n.t.Helper()
	pods := make([]*v1.Pod, count)
	for i := range pods {
		pods[i] = n.createPod(n.apiPod(fmt.Sprintf("%s-%d", prefix, i), "while true; do sleep 1; done"))
	}
	return pods
}

// deletePodsNamed deletes pods gracefully, as a user would.
func (n *clusterNode) deletePodsNamed(pods []*v1.Pod) {
	n.t.Helper()
	for _, p := range pods {
		if err := n.cp.admin.CoreV1().Pods(p.Namespace).Delete(apiCtx, p.Name, metav1.DeleteOptions{}); err != nil {
			n.t.Fatalf("delete pod %s: %v", p.Name, err)
		}
	}
}

func podNames(pods []*v1.Pod) []string {
	names := make([]string, len(pods))
	for i, p := range pods {
		names[i] = p.Name
	}
	return names
}

// podConverged: Running with every container running and ready, and the
// pod's Ready condition true.
func podConverged(p *v1.Pod) bool {
	c := podCondition(p, v1.PodReady)
	return podRunning(p) && c != nil && c.Status == v1.ConditionTrue
}

// apiConverged reports whether the API server shows every pod in live
// converged and none of gone, and what is still off.
func (n *clusterNode) apiConverged(live, gone []string) (bool, string) {
	list, err := n.cp.admin.CoreV1().Pods(n.name).List(apiCtx, metav1.ListOptions{})
	if err != nil {
		return false, err.Error()
	}
	have := map[string]*v1.Pod{}
	for i := range list.Items {
		have[list.Items[i].Name] = &list.Items[i]
	}
	var off []string
	for _, name := range live {
		if p := have[name]; p == nil || !podConverged(p) {
			off = append(off, name+": "+describe(p))
		}
	}
	for _, name := range gone {
		if have[name] != nil {
			off = append(off, name+": still in the API server")
		}
	}
	return len(off) == 0, fmt.Sprintf("%d pods off: %s", len(off), strings.Join(off, "; "))
}

// waitConverged polls the API server every 100 ms until apiConverged holds
// and returns how long that took.
func (n *clusterNode) waitConverged(live, gone []string, timeout time.Duration) time.Duration {
	n.t.Helper()
	start := time.Now()
	eventually100ms(n.t, timeout, "API pods converged", func() (bool, string) { return n.apiConverged(live, gone) })
	return time.Since(start)
}

// eventually100ms is eventually at a tenth of a second, for the waits
// whose duration is the measurement.
func eventually100ms(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	pollUntil(t, timeout, 100*time.Millisecond, what, cond)
}

// rate is what the proxy saw in one phase.
type rate struct {
	name     string
	seconds  float64
	requests int
	maxPerS  int    // the busiest whole second
	series   []int  // requests in each second
	kinds    string // counts by kind of request
}

func (r rate) perSecond() float64 { return float64(r.requests) / r.seconds }

func (r rate) String() string {
	return fmt.Sprintf("%-12s %5.1f s  %4d requests  %5.2f/s  busiest second %d  per second %v  [%s]",
		r.name, r.seconds, r.requests, r.perSecond(), r.maxPerS, r.series, r.kinds)
}

// measure counts the proxy's requests in [from, to).
func (p *faultProxy) measure(name string, from, to time.Time) rate {
	reqs := p.between(from, to)
	r := rate{name: name, seconds: to.Sub(from).Seconds(), requests: len(reqs)}
	buckets := map[int]int{}
	kinds := map[string]int{}
	for _, q := range reqs {
		buckets[int(q.at.Sub(from)/time.Second)]++
		kinds[requestKind(q)]++
	}
	r.series = make([]int, int(math.Ceil(r.seconds)))
	for i, c := range buckets {
		r.maxPerS = max(r.maxPerS, c)
		if i < len(r.series) {
			r.series[i] = c
		}
	}
	var ks []string
	for k, c := range kinds {
		ks = append(ks, fmt.Sprintf("%s %d", k, c))
	}
	sort.Strings(ks)
	r.kinds = strings.Join(ks, ", ")
	return r
}

// requestKind names a request by verb and resource, without names.
func requestKind(q proxyRequest) string {
	parts := strings.Split(strings.Trim(q.path, "/"), "/")
	resource := ""
	// /api/v1/namespaces/NS/pods/NAME/status, /apis/G/V/namespaces/NS/leases/NAME, /api/v1/nodes/NAME/status
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case "api":
			i++ // version
		case "apis":
			i += 2 // group, version
		case "namespaces":
			if i+2 < len(parts) {
				i++ // the namespace; a namespace itself is named last
			} else {
				resource = "namespaces"
				i++ // its name
			}
		default:
			if resource == "" {
				resource = parts[i]
				i++ // the name, if any
			} else {
				resource += "/" + parts[i]
			}
		}
	}
	verb := q.method
	if q.watch {
		verb = "WATCH"
	}
	return verb + " " + resource
}

// logLines returns podline's log lines that contain any of subs.
func (a *agent) logLines(subs ...string) []string {
	var out []string
	for _, line := range strings.Split(a.out.String(), "\n") {
		for _, sub := range subs {
			if strings.Contains(line, sub) {
				out = append(out, line)
				break
			}
		}
	}
	return out
}

// apiLogWords pick out podline's lines about the API server: status
// writes failing and recovering, statuses others changed, errors.
var apiLogWords = []string{"pod status", "succeed again", "someone else", "level=ERROR"}
