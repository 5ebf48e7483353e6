package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/podline/podline/bench/internal/result"
)

// The cluster scenario: density in cluster mode. podline and the upstream
// kubelet in turn join the control plane of scripts/controlplane.sh as a
// fresh node, on a fresh fake CRI with containerd-like latencies, and N
// pods are created through the API server: in the "mixed" shape a
// Deployment of N/2 replicas, which the controller-manager creates and the
// scheduler binds to the node by its label, and N/2 bare pods bound by
// spec.nodeName; in the "bare" shape all N bare, so that no controller or
// scheduler stands between the create and the agent. A watch (an
// informer, as any controller would) times every pod; kube-apiserver's
// audit log counts the agent's requests.

// Shapes of the cluster scenario.
const (
	shapeMixed = "mixed"
	shapeBare  = "bare"
)

var clusterShapes = []string{shapeMixed, shapeBare}

// clusterCase is one run: an agent, N pods in a shape, round Run.
type clusterCase struct {
	Agent string `json:"agent"`
	Pods  int    `json:"pods"`
	Shape string `json:"shape"`
	Run   int    `json:"run"`
	Runs  int    `json:"-"`
}

func (c clusterCase) label() string {
	return fmt.Sprintf("%s, %d pods %s, round %d/%d", c.Agent, c.Pods, c.Shape, c.Run, c.Runs)
}

// split is how many of the pods the Deployment makes and how many are
// bare.
func (c clusterCase) split() (deployed, bare int) {
	if c.Shape == shapeBare {
		return 0, c.Pods
	}
	return c.Pods / 2, c.Pods - c.Pods/2
}

// clusterPlan interleaves the runs: for each shape, round 1 of every
// agent, then round 2, so that a slow spell of the machine (or of the
// control plane, which keeps running) falls on all of them. agents and
// shapes are comma-separated lists; without the kubelet binary only
// podline runs.
func clusterPlan(withKubelet bool, runs, pods int, agents, shapes string) []clusterCase {
	var out []clusterCase
	for _, sh := range clusterShapes {
		if !slices.Contains(splitList(shapes), sh) {
			continue
		}
		for r := 1; r <= runs; r++ {
			for _, a := range []string{podline, kubelet} {
				if !slices.Contains(splitList(agents), a) || (a == kubelet && !withKubelet) {
					continue
				}
				out = append(out, clusterCase{Agent: a, Pods: pods, Shape: sh, Run: r, Runs: runs})
			}
		}
	}
	return out
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// clusterRun is what one run measured. Times are the suite's wall clock:
// t0 is just before the first create.
type clusterRun struct {
	clusterCase
	Node string `json:"node"`

	// CreateSec: t0 → the suite's last create returned (the Deployment's
	// pods are created later, by the controller-manager).
	CreateSec float64 `json:"create_sec"`
	// AllRunningSec: t0 → the watch has seen every pod Running with its
	// container ready.
	AllRunningSec float64 `json:"all_running_sec"`
	// StartupSLI is the pod startup SLI: creationTimestamp (whole seconds,
	// as the API stores it) → first seen running by the watch. Startup is
	// the same from the watch's first sight of the pod (its create, within
	// milliseconds), which has no rounding; StartupBare and
	// StartupDeployment split it by how the pod reached the node.
	StartupSLI        result.Quantiles `json:"startup_sli_ms"`
	Startup           result.Quantiles `json:"startup_ms"`
	StartupBare       result.Quantiles `json:"startup_bare_ms"`
	StartupDeployment result.Quantiles `json:"startup_deployment_ms"`
	StartupMs         []float64        `json:"startup_samples_ms"`

	// CPU seconds over t0 → all Running (utime+stime): the agent, the API
	// server, and the controller-manager with the scheduler. Peak RSS is
	// the agent's VmHWM then.
	AgentCPUSec       float64 `json:"agent_cpu_sec"`
	AgentPeakRSSMiB   float64 `json:"agent_peak_rss_mib"`
	APIServerCPUSec   float64 `json:"apiserver_cpu_sec"`
	ControllersCPUSec float64 `json:"controllers_cpu_sec"`

	// Requests is the agent's API requests received in t0 → all Running,
	// from the audit log (nil without one), events left out.
	Requests *requestCount `json:"requests,omitempty"`

	// Delete: the Deployment scaled to 0 and the bare pods deleted → the
	// watch has seen every pod gone from the API.
	DeleteSec         float64       `json:"delete_sec"`
	DeleteAgentCPUSec float64       `json:"delete_agent_cpu_sec"`
	DeleteRequests    *requestCount `json:"delete_requests,omitempty"`
}

// requestsPerPod is a count over the run's pods; -1 (not counted) without one.
func requestsPerPod(c *requestCount, pods int) float64 {
	if c == nil || pods == 0 {
		return -1
	}
	return float64(c.Total) / float64(pods)
}
