package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podline/podline/bench/internal/procstat"
)

// clusterScenario brings the control plane up (unless it runs already),
// runs the plan and writes cluster.json and cluster.md into out.
func (s *suite) clusterScenario(ctx context.Context, out string) error {
	cp, err := upControlPlane(ctx, s.cfg.repo, s.tmp)
	if err != nil {
		return err
	}
	defer cp.down()
	cases := clusterPlan(s.kubelet != "", s.cfg.clusterRuns, s.cfg.clusterPods, s.cfg.clusterAgents, s.cfg.clusterShapes)
	var last string
	err = runCases(ctx, "cluster", out, cases,
		func(clusterCase) int { return 1 },
		func(c clusterCase) string { return c.label() },
		func(c clusterCase, _ int, label string) (clusterRun, error) { return s.clusterCase(ctx, cp, c, label) },
		func(runs []clusterRun, failed []string) error {
			last = clusterMarkdown(s.run, cp.auditLog != "", runs, failed)
			return writeCases(out, "cluster", s.run, runs, failed, last)
		})
	fmt.Println(last)
	return err
}

// clusterCase runs one agent as a fresh node with a namespace of its own,
// and leaves neither behind.
func (s *suite) clusterCase(ctx context.Context, cp *controlPlane, c clusterCase, label string) (clusterRun, error) {
	res := clusterRun{clusterCase: c}
	b := make([]byte, 3)
	rand.Read(b)
	node := fmt.Sprintf("bench-%s-%d-%s", c.Agent, c.Run, hex.EncodeToString(b))
	res.Node = node
	dir, err := os.MkdirTemp(s.tmp, "cluster-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	progress("%s: node %s", label, node)
	kubeconfig, err := cp.nodeKubeconfig(ctx, node)
	if err != nil {
		return res, err
	}
	// Deferred cleanups run last first: the agent stops, then its Node,
	// Lease and namespace go.
	defer cleanupNode(cp, node)
	if err := createNamespace(ctx, cp, node); err != nil {
		return res, err
	}
	f, err := startFakeCRI(ctx, s.fakecri, dir, fakeC)
	if err != nil {
		return res, err
	}
	defer f.stop(5 * time.Second)
	a, err := s.startClusterAgent(ctx, c.Agent, dir, "unix://"+f.socket, node, kubeconfig, c.Pods+c.Pods/10+10)
	if err != nil {
		return res, err
	}
	stopAgent := sync.OnceFunc(func() { release(a, label) })
	defer stopAgent()
	alive := func() error {
		if a.exited() {
			return a.errExited()
		}
		return nil
	}
	if err := waitNodeReady(ctx, cp, node, alive); err != nil {
		return res, err
	}
	tr, err := newPodTracker(cp.admin, node)
	if err != nil {
		return res, err
	}
	defer tr.close()
	if err := tr.waitSynced(ctx); err != nil {
		return res, err
	}
	// As in the static scenarios: the kubelet keeps initialising for
	// seconds after it serves.
	if err := sleep(ctx, s.settle()); err != nil {
		return res, err
	}
	offset := auditOffset(cp.auditLog)
	start, err := clusterStart(ctx, cp, a, tr, &res, alive, label)
	if err != nil {
		return res, err
	}
	del, err := clusterDelete(ctx, cp, a, tr, &res, alive, label)
	if err != nil {
		return res, err
	}
	// Stopped first: its watches end, and only then are they logged.
	stopAgent()
	if cp.auditLog != "" {
		counts, err := countAudit(cp.auditLog, offset, "system:node:"+node, start, del)
		if err != nil {
			return res, fmt.Errorf("audit log: %w", err)
		}
		res.Requests, res.DeleteRequests = &counts[0], &counts[1]
		progress("%s: API requests per pod, events left out: start %.2f (%s), delete %.2f (%s)", label,
			requestsPerPod(res.Requests, c.Pods), verbSummary(res.Requests, c.Pods),
			requestsPerPod(res.DeleteRequests, c.Pods), verbSummary(res.DeleteRequests, c.Pods))
	}
	return res, nil
}

// clusterStart creates the pods and waits until the watch has seen every
// one running; it returns the span it measured.
func clusterStart(ctx context.Context, cp *controlPlane, a agent, tr *podTracker, res *clusterRun, alive func() error, label string) (window, error) {
	agent0, err := procstat.Read(a.pid(), false)
	if err != nil {
		return window{}, err
	}
	api0, ctl0 := cp.cpuSeconds("kube-apiserver"), controllersCPU(cp)
	deployed, bare := res.split()
	t0 := time.Now()
	if err := createPods(ctx, cp.admin, res.Node, res.Node, deployed, bare); err != nil {
		return window{}, err
	}
	res.CreateSec = time.Since(t0).Seconds()
	timeout := 2*time.Minute + time.Duration(res.Pods)*200*time.Millisecond
	err = waitFor(ctx, label, timeout, alive, func() (bool, string) {
		seen, running, _ := tr.counts()
		return running >= res.Pods, fmt.Sprintf("%d/%d pods in the API, %d Running", seen, res.Pods, running)
	})
	if err != nil {
		return window{}, err
	}
	t1 := time.Now()
	agent1, err := procstat.Read(a.pid(), false)
	if err != nil {
		return window{}, err
	}
	res.AgentCPUSec = agent1.CPUSeconds() - agent0.CPUSeconds()
	res.AgentPeakRSSMiB = mib(float64(agent1.HWM))
	res.APIServerCPUSec = cp.cpuSeconds("kube-apiserver") - api0
	res.ControllersCPUSec = controllersCPU(cp) - ctl0

	var last time.Time
	var sli, all, byBare, byDeploy []float64
	for _, pt := range tr.snapshot() {
		if pt.running.IsZero() {
			continue
		}
		last = maxTime(last, pt.running)
		ms := roundMs(pt.running.Sub(pt.seen))
		all = append(all, ms)
		sli = append(sli, roundMs(pt.running.Sub(pt.created)))
		if pt.kind == kindDeployment {
			byDeploy = append(byDeploy, ms)
		} else {
			byBare = append(byBare, ms)
		}
	}
	for _, xs := range [][]float64{sli, all, byBare, byDeploy} {
		slices.Sort(xs)
	}
	res.AllRunningSec = last.Sub(t0).Seconds()
	res.StartupMs = all
	res.Startup, res.StartupSLI = quantiles(all), quantiles(sli)
	res.StartupBare, res.StartupDeployment = quantiles(byBare), quantiles(byDeploy)
	progress("%s: all %d Running in %.2fs (creates took %.2fs), SLI p50 %.0f p99 %.0f ms; CPU s: agent %.2f, kube-apiserver %.2f, controllers %.2f; peak RSS %.0f MiB",
		label, res.Pods, res.AllRunningSec, res.CreateSec, res.StartupSLI.P50, res.StartupSLI.P99,
		res.AgentCPUSec, res.APIServerCPUSec, res.ControllersCPUSec, res.AgentPeakRSSMiB)
	return window{t0, t1}, nil
}

// clusterDelete deletes every pod and waits until the watch has seen
// each go from the API, which happens once the agent has stopped it.
func clusterDelete(ctx context.Context, cp *controlPlane, a agent, tr *podTracker, res *clusterRun, alive func() error, label string) (window, error) {
	agent0, err := procstat.Read(a.pid(), false)
	if err != nil {
		return window{}, err
	}
	deployed, _ := res.split()
	t0 := time.Now()
	if err := deletePods(ctx, cp.admin, res.Node, deployed > 0); err != nil {
		return window{}, err
	}
	timeout := 2*time.Minute + time.Duration(res.Pods)*200*time.Millisecond
	err = waitFor(ctx, label, timeout, alive, func() (bool, string) {
		seen, _, gone := tr.counts()
		return gone >= seen, fmt.Sprintf("deleting: %d of %d pods gone from the API", gone, seen)
	})
	if err != nil {
		return window{}, fmt.Errorf("delete: %w", err)
	}
	t1 := time.Now()
	res.DeleteSec = t1.Sub(t0).Seconds()
	if agent1, err := procstat.Read(a.pid(), false); err == nil {
		res.DeleteAgentCPUSec = agent1.CPUSeconds() - agent0.CPUSeconds()
	}
	progress("%s: all gone from the API in %.2fs, agent CPU %.2fs", label, res.DeleteSec, res.DeleteAgentCPUSec)
	return window{t0, t1}, nil
}

func controllersCPU(cp *controlPlane) float64 {
	return cp.cpuSeconds("kube-controller-manager") + cp.cpuSeconds("kube-scheduler")
}

// createNamespace makes the run's namespace and waits for the default
// ServiceAccount, without which the API refuses pods.
func createNamespace(ctx context.Context, cp *controlPlane, ns string) error {
	_, err := cp.admin.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("create namespace: %w", err)
	}
	return waitFor(ctx, "namespace "+ns, 30*time.Second, func() error { return nil }, func() (bool, string) {
		_, err := cp.admin.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprintf("default ServiceAccount: %v", err)
	})
}

// waitNodeReady waits until the Node is Ready and carries no taint: the
// controller-manager takes the not-ready taint off a moment after Ready,
// and until then the scheduler would not place the Deployment's pods.
func waitNodeReady(ctx context.Context, cp *controlPlane, node string, alive func() error) error {
	return waitFor(ctx, "node "+node, 2*time.Minute, alive, func() (bool, string) {
		n, err := cp.admin.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ready := false
		for _, c := range n.Status.Conditions {
			ready = ready || (c.Type == v1.NodeReady && c.Status == v1.ConditionTrue)
		}
		return ready && len(n.Spec.Taints) == 0, fmt.Sprintf("ready %v, taints %v", ready, n.Spec.Taints)
	})
}

// cleanupNode deletes the run's namespace (its pods are gone by now, or
// the failed run leaves them to the namespace controller), the Node and
// its Lease, so the next run starts clean.
func cleanupNode(cp *controlPlane, node string) {
	ctx := context.Background()
	zero := int64(0)
	opts := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	// A failed run's pods: with the agent gone, nothing else would finish
	// their deletion.
	if err := cp.admin.CoreV1().Pods(node).DeleteCollection(ctx, opts, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
		progress("cluster: delete the pods of %s: %v", node, err)
	}
	for what, del := range map[string]func() error{
		"namespace": func() error { return cp.admin.CoreV1().Namespaces().Delete(ctx, node, metav1.DeleteOptions{}) },
		"node":      func() error { return cp.admin.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{}) },
		"lease": func() error {
			return cp.admin.CoordinationV1().Leases("kube-node-lease").Delete(ctx, node, metav1.DeleteOptions{})
		},
	} {
		if err := del(); err != nil && !apierrors.IsNotFound(err) {
			progress("cluster: delete %s %s: %v", what, node, err)
		}
	}
}
