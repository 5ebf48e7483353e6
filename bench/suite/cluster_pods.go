package main

import (
	"context"
	"fmt"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Labels of the cluster scenario's objects: the node label pins the
// Deployment's pods to the agent under test through the scheduler; kind
// tells the Deployment's pods from the bare ones.
const (
	clusterNodeLabel = "bench.podline.dev/node"
	clusterKindLabel = "bench.podline.dev/kind"
	kindDeployment   = "deployment"
	kindBare         = "bare"
	deploymentName   = "bench"
)

// clusterPodSpec is the static scenarios' pod (manifests.go) as an API
// pod: host network, BestEffort, one busybox container sleeping. No
// service account token is mounted: the static pods have no volume
// either, and a token would measure TokenRequest, not the start.
func clusterPodSpec() v1.PodSpec {
	grace := int64(1)
	no := false
	return v1.PodSpec{
		RestartPolicy:                 v1.RestartPolicyAlways,
		HostNetwork:                   true,
		TerminationGracePeriodSeconds: &grace,
		AutomountServiceAccountToken:  &no,
		Containers: []v1.Container{{
			Name:            "app",
			Image:           image,
			ImagePullPolicy: v1.PullIfNotPresent,
			Command:         []string{"sleep", "86400"},
		}},
	}
}

// barePod is bound to node by spec.nodeName: no scheduler between the
// create and the agent.
func barePod(name, node string) *v1.Pod {
	spec := clusterPodSpec()
	spec.NodeName = node
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{clusterKindLabel: kindBare}},
		Spec:       spec,
	}
}

// deployment's pods go through the controller-manager and the scheduler,
// which places them by the node's label.
func deployment(replicas int, node string) *appsv1.Deployment {
	labels := map[string]string{clusterKindLabel: kindDeployment}
	spec := clusterPodSpec()
	spec.NodeSelector = map[string]string{clusterNodeLabel: node}
	n := int32(replicas)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: deploymentName},
		Spec: appsv1.DeploymentSpec{
			Replicas: &n,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}

// createWorkers is how many creates the suite has in flight: enough that
// its own round trips do not pace the bare pods.
const createWorkers = 32

// createPods makes the Deployment (when deployed > 0) and bare bare pods
// in ns, the Deployment first since its pods have the longer way.
func createPods(ctx context.Context, c kubernetes.Interface, ns, node string, deployed, bare int) error {
	if deployed > 0 {
		if _, err := c.AppsV1().Deployments(ns).Create(ctx, deployment(deployed, node), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create deployment: %w", err)
		}
	}
	names := make(chan string)
	errs := make(chan error, createWorkers)
	var wg sync.WaitGroup
	for range min(createWorkers, max(bare, 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range names {
				if _, err := c.CoreV1().Pods(ns).Create(ctx, barePod(name, node), metav1.CreateOptions{}); err != nil {
					errs <- fmt.Errorf("create pod %s: %w", name, err)
					return
				}
			}
		}()
	}
	var err error
feed:
	for i := range bare {
		select {
		case names <- fmt.Sprintf("bench-%05d", i):
		case err = <-errs:
			break feed
		}
	}
	close(names)
	wg.Wait()
	if err == nil {
		select {
		case err = <-errs:
		default:
		}
	}
	return err
}

// deletePods scales the Deployment to 0 and deletes the bare pods in one
// request; the agent then stops each pod and removes its object.
func deletePods(ctx context.Context, c kubernetes.Interface, ns string, deployed bool) error {
	if deployed {
		patch := []byte(`{"spec":{"replicas":0}}`)
		if _, err := c.AppsV1().Deployments(ns).Patch(ctx, deploymentName, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("scale deployment to 0: %w", err)
		}
	}
	err := c.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: clusterKindLabel + "=" + kindBare})
	if err != nil {
		return fmt.Errorf("delete bare pods: %w", err)
	}
	return nil
}
