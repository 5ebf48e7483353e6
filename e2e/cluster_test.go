//go:build e2e

package e2e

// The cluster tests run podline as a node of the real control plane that
// scripts/with-controlplane.sh starts (etcd, kube-apiserver with Node,RBAC
// and NodeRestriction, scheduler, controller-manager). Each test is its own
// node, with a node identity (system:node:<name>) of its own, a namespace
// of the same name for its API pods, and leaves neither behind. Without
// PODLINE_CONTROLPLANE they skip, so the standalone e2e tests still run
// under scripts/with-runtime.sh alone; `make test-e2e` runs them after the
// others, with the control plane (scripts/e2e.sh), so their names start
// with TestCluster.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
	"github.com/podline/podline/internal/podtest"
)

// nodeLabel is set with --node-labels on every test node; pods pin
// themselves to their test's node with it.
const nodeLabel = "e2e.podline.dev/node"

// apiCtx is the context of the tests' API calls; the client's own timeout
// bounds each of them.
var apiCtx = context.Background()

// controlPlane is what with-controlplane.sh exported.
type controlPlane struct {
	admin      kubernetes.Interface
	kubeconfig string // system:masters
	kubectl    string
	script     string // controlplane.sh
	// monitorGrace is the controller-manager's --node-monitor-grace-period.
	monitorGrace time.Duration
}

var (
	cpOnce sync.Once
	cpVal  *controlPlane
	cpErr  error
)

func needControlPlane(t *testing.T) *controlPlane {
	t.Helper()
	if os.Getenv("PODLINE_E2E_PHASE") == "runtime" {
		// scripts/e2e.sh runs only TestCluster* with the control plane.
		t.Fatal("this test needs the control plane: its name must start with TestCluster (scripts/e2e.sh)")
	}
	if os.Getenv("PODLINE_CONTROLPLANE") == "" {
		t.Skip("no control plane: run under scripts/with-controlplane.sh (make test-e2e does)")
	}
	cpOnce.Do(func() { cpVal, cpErr = loadControlPlane() })
	if cpErr != nil {
		t.Fatalf("control plane from with-controlplane.sh: %v", cpErr)
	}
	return cpVal
}

func loadControlPlane() (*controlPlane, error) {
	c := &controlPlane{
		kubeconfig: os.Getenv("PODLINE_ADMIN_KUBECONFIG"),
		kubectl:    os.Getenv("PODLINE_KUBECTL"),
		script:     os.Getenv("PODLINE_CONTROLPLANE"),
	}
	var err error
	if c.monitorGrace, err = time.ParseDuration(os.Getenv("PODLINE_NODE_MONITOR_GRACE_PERIOD")); err != nil {
		return nil, fmt.Errorf("PODLINE_NODE_MONITOR_GRACE_PERIOD: %w", err)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", c.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("admin kubeconfig %q: %w", c.kubeconfig, err)
	}
	rc.QPS, rc.Burst = 100, 200
	// Every call is bounded here, so the tests pass apiCtx and never hang
	// on an API server that is down.
	rc.Timeout = 20 * time.Second
	if c.admin, err = kubernetes.NewForConfig(rc); err != nil {
		return nil, err
	}
	return c, nil
}

// run runs controlplane.sh with args and returns its stdout.
func (c *controlPlane) run(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(c.script, args...)
	var stderr podtest.LogBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("controlplane.sh %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// clusterNode is one podline registered as its own node.
type clusterNode struct {
	t     *testing.T
	cp    *controlPlane
	name  string // node name, also the namespace of the test's pods
	agent *agent
	uids  []string // API pods the cleanup saw, to find in the runtime
}

// startNode runs podline as a fresh node "e2e-<random>" with its own node
// certificate; extra flags go last. Cleanup deletes the test's pods (and
// waits for podline to finish them), stops podline, then deletes the Node
// and whatever it left in the API or the runtime.
func startNode(t *testing.T, extra ...string) *clusterNode {
	t.Helper()
	return startNodeVia(t, nil, extra...)
}

// startNodeVia is startNode with podline's kubeconfig made by via from the
// node's own (nil: the node's own), to put a proxy in between.
func startNodeVia(t *testing.T, via func(cp *controlPlane, kubeconfig string) string, extra ...string) *clusterNode {
	t.Helper()
	cp := needControlPlane(t)
	b := make([]byte, 3)
	rand.Read(b)
	n := &clusterNode{t: t, cp: cp, name: "e2e-" + hex.EncodeToString(b)}
	kubeconfig := cp.run(t, "node-kubeconfig", n.name)
	if via != nil {
		kubeconfig = via(cp, kubeconfig)
	}
	// Cleanups run last-registered first: pods, then podline, then the node.
	t.Cleanup(n.deleteNode)
	n.createNamespace()
	flags := []string{
		"--kubeconfig", kubeconfig,
		"--hostname-override", n.name,
		"--node-labels", nodeLabel + "=" + n.name,
	}
	n.agent = startAgent(t, append(flags, extra...)...)
	t.Cleanup(n.deletePods)
	return n
}

// createNamespace makes the test's namespace and waits for what pods in it
// need: the default ServiceAccount and the kube-root-ca.crt ConfigMap.
func (n *clusterNode) createNamespace() {
	t := n.t
	t.Helper()
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n.name}}
	if _, err := n.cp.admin.CoreV1().Namespaces().Create(apiCtx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The controller manager makes both. Right after a test that restarted
	// the API server, its watches may still be in their back-off (client-go
	// waits up to 30 s between tries), so the wait is longer than that.
	began := time.Now()
	defer func() {
		if d := time.Since(began); d > 10*time.Second {
			t.Logf("namespace %s ready for pods after %s (the controller manager was slow to make its service account and CA)", n.name, d.Round(time.Millisecond))
		}
	}()
	eventually(t, 90*time.Second, "namespace "+n.name+" ready for pods", func() (bool, string) {
		_, errSA := n.cp.admin.CoreV1().ServiceAccounts(n.name).Get(apiCtx, "default", metav1.GetOptions{})
		_, errCM := n.cp.admin.CoreV1().ConfigMaps(n.name).Get(apiCtx, "kube-root-ca.crt", metav1.GetOptions{})
		return errSA == nil && errCM == nil, fmt.Sprintf("serviceaccount: %v, configmap: %v", errSA, errCM)
	})
}

// nodePods lists the API pods bound to this node, in every namespace.
func (n *clusterNode) nodePods() ([]v1.Pod, error) {
	list, err := n.cp.admin.CoreV1().Pods("").List(apiCtx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", n.name).String(),
	})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// deletePods deletes the test's namespace and waits until podline has
// stopped its pods, finally deleted their API objects and removed their
// sandboxes (mirror pods go with their manifests, in the agent's cleanup).
func (n *clusterNode) deletePods() {
	t := n.t
	if pods, err := n.nodePods(); err == nil {
		for _, p := range pods {
			if p.Annotations[mirrorAnnotation] == "" {
				n.uids = append(n.uids, string(p.UID))
			}
		}
	}
	// The pods are deleted here, not left to the namespace controller: after
	// an API server restart the controller-manager's informers back off for
	// up to a minute, and this cleanup is about podline, not them.
	err := n.cp.admin.CoreV1().Pods(n.name).DeleteCollection(apiCtx, metav1.DeleteOptions{}, metav1.ListOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete pods in %s: %v", n.name, err)
	}
	err = n.cp.admin.CoreV1().Namespaces().Delete(apiCtx, n.name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete namespace %s: %v", n.name, err)
	}
	start := time.Now()
	deadline := start.Add(60 * time.Second)
	for {
		pods, err := n.nodePods()
		if err != nil {
			t.Errorf("list pods of node %s: %v", n.name, err)
			return
		}
		var left []string
		for _, p := range pods {
			if p.Annotations[mirrorAnnotation] == "" {
				left = append(left, "api:"+p.Namespace+"/"+p.Name)
			}
		}
		for _, uid := range n.uids {
			if len(runtimePods(t, uid)) > 0 {
				left = append(left, "runtime:"+uid)
			}
		}
		if len(left) == 0 {
			if took := time.Since(start); took > 5*time.Second {
				t.Logf("cleanup: the node's pods took %s to go", took)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("pods not deleted by node %s within 60s: %v", n.name, left)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// deleteNode runs once podline is stopped: it removes the Node and its
// Lease and, forcibly, whatever pods a failed test left bound to it in the
// API or the runtime, so the next test starts clean.
func (n *clusterNode) deleteNode() {
	t := n.t
	pods, _ := n.nodePods()
	zero := int64(0)
	uids := n.uids
	for _, p := range pods {
		n.cp.admin.CoreV1().Pods(p.Namespace).Delete(apiCtx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		uid := string(p.UID)
		if h := p.Annotations[mirrorAnnotation]; h != "" {
			uid = h
		}
		uids = append(uids, uid)
	}
	for _, uid := range uids {
		for _, id := range runtimePods(t, uid) {
			t.Logf("removing sandbox %s of pod %s left in the runtime", id, uid)
			runtime.StopPodSandbox(context.Background(), id)
			runtime.RemovePodSandbox(context.Background(), id)
		}
	}
	if err := n.cp.admin.CoreV1().Nodes().Delete(apiCtx, n.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete node %s: %v", n.name, err)
	}
	// Its owner reference would take it with the Node; a test that fails
	// on that should not leave it behind either.
	err := n.cp.admin.CoordinationV1().Leases("kube-node-lease").Delete(apiCtx, n.name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete lease %s: %v", n.name, err)
	}
}

const mirrorAnnotation = "kubernetes.io/config.mirror"

// node fetches the Node object.
func (n *clusterNode) node() (*v1.Node, error) {
	return n.cp.admin.CoreV1().Nodes().Get(apiCtx, n.name, metav1.GetOptions{})
}

// waitReady waits for the node's Ready condition to be True.
func (n *clusterNode) waitReady(timeout time.Duration) *v1.Node {
	n.t.Helper()
	var node *v1.Node
	eventually(n.t, timeout, "node "+n.name+" Ready", func() (bool, string) {
		var err error
		if node, err = n.node(); err != nil {
			return false, err.Error()
		}
		c := condition(node, v1.NodeReady)
		return c != nil && c.Status == v1.ConditionTrue, fmt.Sprintf("Ready condition %+v", c)
	})
	return node
}

func condition(node *v1.Node, typ v1.NodeConditionType) *v1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == typ {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

// apiPod is a one-container busybox pod in the test's namespace, bound to
// the test's node (nodeName set: the scheduler is not involved). script
// runs under sh with a TERM trap, so deletion is prompt. The service
// account token is not mounted: these tests are about the pod lifecycle.
func (n *clusterNode) apiPod(name, script string) *v1.Pod {
	grace, no := int64(5), false
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: n.name},
		Spec: v1.PodSpec{
			NodeName:                      n.name,
			TerminationGracePeriodSeconds: &grace,
			AutomountServiceAccountToken:  &no,
			Containers: []v1.Container{{
				Name:    "app",
				Image:   busybox,
				Command: []string{"sh", "-c", "trap 'exit 0' TERM; " + script},
			}},
		},
	}
}

func (n *clusterNode) createPod(p *v1.Pod) *v1.Pod {
	n.t.Helper()
	got, err := n.cp.admin.CoreV1().Pods(p.Namespace).Create(apiCtx, p, metav1.CreateOptions{})
	if err != nil {
		n.t.Fatalf("create pod %s: %v", p.Name, err)
	}
	return got
}

// waitAPIPod polls the API server until pod ns/name satisfies cond.
func (n *clusterNode) waitAPIPod(ns, name, what string, timeout time.Duration, cond func(*v1.Pod) bool) *v1.Pod {
	n.t.Helper()
	var p *v1.Pod
	eventually(n.t, timeout, fmt.Sprintf("pod %s/%s %s", ns, name, what), func() (bool, string) {
		var err error
		if p, err = n.cp.admin.CoreV1().Pods(ns).Get(apiCtx, name, metav1.GetOptions{}); err != nil {
			return false, err.Error()
		}
		return cond(p), describe(p)
	})
	return p
}

// podRunning: phase Running and every container running and ready.
func podRunning(p *v1.Pod) bool {
	if p.Status.Phase != v1.PodRunning || len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil || !cs.Ready {
			return false
		}
	}
	return true
}

// runningContainers lists the IDs of the runtime's running containers of
// one pod UID.
func runningContainers(t *testing.T, uid string) []string {
	t.Helper()
	cs, err := runtime.ListContainers(context.Background(), &runtimeapi.ContainerFilter{
		LabelSelector: map[string]string{cri.LabelPodUID: uid},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cs {
		if c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			ids = append(ids, c.Id)
		}
	}
	return ids
}

// eventually polls cond every 200 ms until it holds; on timeout the test
// fails with what was awaited and cond's last word on why not.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	pollUntil(t, timeout, 200*time.Millisecond, what, cond)
}

// pollUntil polls cond every interval until it holds, or fails the test
// at timeout.
func pollUntil(t *testing.T, timeout, interval time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s; last: %s", what, timeout, why)
		}
		time.Sleep(interval)
	}
}
