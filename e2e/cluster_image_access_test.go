//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A private image pulled with one namespace's pull secret does not run in
// another namespace just because the node has it (KubeletEnsureSecretPulledImages,
// the default NeverVerifyPreloadedImages policy), against the real
// registry. Namespace a pulls a tag new to this run with its secret.
// In namespace b a pod with imagePullPolicy IfNotPresent and no secret,
// or a secret with a wrong password, pulls the image itself and the
// registry refuses it (ErrImagePull with the registry's answer); with
// Never it is told the image is absent (ErrImageNeverPull). A secret of
// b's own holding the right credentials runs its pod from the node's copy
// (the record matches the credential's hash). After a restart of podline
// the records still answer: b without a secret is refused again and a's
// secret runs a pod with pull policy Never. Restarted with NeverVerify,
// the behaviour before the check, the node runs b's pod without a secret
// from its copy.
func TestClusterPrivateImageStaysInItsNamespace(t *testing.T) {
	r := needRegistry(t)
	n := startNode(t)
	n.waitReady(60 * time.Second)
	began := time.Now()
	step := func(what string) { t.Logf("%s (%s in)", what, time.Since(began).Round(100*time.Millisecond)) }
	tag := fmt.Sprintf("ns-check-%d", time.Now().UnixNano())
	r.retag(t, "1.36", tag)
	image := r.busybox + ":" + tag

	a, b := n.name, n.extraNamespace("b")
	n.createPullSecret(a, "pull", r.dockerConfigJSON(r.user, r.password))
	n.createPullSecret(b, "right", r.dockerConfigJSON(r.user, r.password))
	n.createPullSecret(b, "wrong", r.dockerConfigJSON(r.user, "not-"+r.password))
	pod := func(ns, name string, policy v1.PullPolicy, secrets ...string) *v1.Pod {
		p := n.apiPod(name, "while true; do sleep 1; done")
		p.Namespace = ns
		p.Spec.Containers[0].Image, p.Spec.Containers[0].ImagePullPolicy = image, policy
		for _, s := range secrets {
			p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, v1.LocalObjectReference{Name: s})
		}
		return n.createPod(p)
	}

	first := pod(a, "first", v1.PullIfNotPresent, "pull")
	n.waitAPIPod(a, first.Name, "Running", 90*time.Second, podRunning)
	n.waitEvent(first, "Normal Pulled spec.containers{app}", fmt.Sprintf("Successfully pulled image %q", image))
	step("namespace a pulled the image with its secret")

	refused := func(round string) {
		t.Helper()
		none := pod(b, "none-"+round, v1.PullIfNotPresent)
		wrong := pod(b, "wrong-"+round, v1.PullIfNotPresent, "wrong")
		never := pod(b, "never-"+round, v1.PullNever)
		for _, tc := range []struct {
			pod  *v1.Pod
			want []string
		}{
			{none, []string{"rpc error: code = ", image, "authorization"}},
			{wrong, []string{"rpc error: code = ", image, "401 Unauthorized"}},
		} {
			p := n.waitAPIPod(b, tc.pod.Name, "ErrImagePull", 60*time.Second, pullWaitIs("ErrImagePull"))
			msg := pullWaitMessage(p)
			t.Logf("%s: ErrImagePull: %s", p.Name, msg)
			if !containsAll(msg, tc.want) {
				t.Errorf("pod %s/%s: ErrImagePull message %q, want %q", b, p.Name, msg, tc.want)
			}
			n.waitEvent(p, "Normal Pulling spec.containers{app}", fmt.Sprintf("Pulling image %q", image))
			n.waitEvent(p, "Warning Failed spec.containers{app}", fmt.Sprintf("Failed to pull image %q: %s", image, msg))
			if p.Status.Phase != v1.PodPending {
				t.Errorf("pod %s/%s: phase %s, want Pending", b, p.Name, p.Status.Phase)
			}
		}
		p := n.waitAPIPod(b, never.Name, "ErrImageNeverPull", 60*time.Second, pullWaitIs("ErrImageNeverPull"))
		want := fmt.Sprintf("Container image %q is not present with pull policy of Never", image)
		if pullWaitMessage(p) != want {
			t.Errorf("pod %s/%s: message %q, want %q", b, p.Name, pullWaitMessage(p), want)
		}
		n.waitEvent(p, "Warning ErrImageNeverPull spec.containers{app}", want)
	}
	refused("before")
	step("namespace b refused without the credentials")

	right := pod(b, "right", v1.PullIfNotPresent, "right")
	n.waitAPIPod(b, right.Name, "Running", 60*time.Second, podRunning)
	n.waitEvent(right, "Normal Pulled spec.containers{app}",
		fmt.Sprintf("Container image %q already present on machine and can be accessed by the pod", image))
	step("namespace b's own secret with the same credentials ran its pod without a pull")

	records, _ := filepath.Glob(filepath.Join(n.agent.root, "image_manager", "pulled", "sha256-*"))
	if len(records) != 1 {
		t.Errorf("image pull records: %v, want the one of the image", records)
	}
	if len(records) > 0 {
		rec, _ := os.ReadFile(records[0])
		if !containsAll(string(rec), []string{`"kind":"ImagePulledRecord"`, `"namespace":"` + a + `","name":"pull"`, `"namespace":"` + b + `","name":"right"`}) {
			t.Errorf("image pull record lacks the secrets of a and b:\n%s", rec)
		}
	}

	n.agent.kill9()
	n.agent.start()
	n.waitReady(60 * time.Second)
	refused("after")
	again := pod(a, "again", v1.PullNever, "pull")
	n.waitAPIPod(a, again.Name, "Running", 60*time.Second, podRunning)
	step("after a restart, the records answered the same")

	// The same node and records under NeverVerify, the behaviour before
	// the check: b's pod without a secret runs from the node's copy.
	n.agent.kill9()
	n.agent.extra = append(n.agent.extra, "--image-pull-credentials-verification-policy=NeverVerify")
	n.agent.start()
	n.waitReady(60 * time.Second)
	open := pod(b, "open", v1.PullIfNotPresent)
	n.waitAPIPod(b, open.Name, "Running", 60*time.Second, podRunning)
	step("under NeverVerify, namespace b ran the image without credentials")
}

// extraNamespace makes a second namespace for the test's pods, named
// after the node's with suffix, and waits until pods can be made in it;
// its pods and itself are deleted before the node's cleanup runs.
func (n *clusterNode) extraNamespace(suffix string) string {
	t := n.t
	t.Helper()
	name := n.name + "-" + suffix
	if _, err := n.cp.admin.CoreV1().Namespaces().Create(apiCtx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		err := n.cp.admin.CoreV1().Pods(name).DeleteCollection(apiCtx, metav1.DeleteOptions{}, metav1.ListOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete pods in %s: %v", name, err)
		}
		pollUntil(t, 60*time.Second, time.Second, "pods of "+name+" gone", func() (bool, string) {
			pods, err := n.nodePods()
			if err != nil {
				return false, err.Error()
			}
			var left []string
			for _, p := range pods {
				if p.Namespace == name {
					left = append(left, p.Name)
				}
			}
			return len(left) == 0, strings.Join(left, " ")
		})
		if err := n.cp.admin.CoreV1().Namespaces().Delete(apiCtx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete namespace %s: %v", name, err)
		}
	})
	eventually(t, 90*time.Second, "namespace "+name+" ready for pods", func() (bool, string) {
		_, err := n.cp.admin.CoreV1().ServiceAccounts(name).Get(apiCtx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprintf("serviceaccount: %v", err)
	})
	return name
}

// createPullSecret makes a kubernetes.io/dockerconfigjson secret.
func (n *clusterNode) createPullSecret(ns, name string, config []byte) {
	n.t.Helper()
	s := &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Type:       v1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{v1.DockerConfigJsonKey: config},
	}
	if _, err := n.cp.admin.CoreV1().Secrets(ns).Create(apiCtx, s, metav1.CreateOptions{}); err != nil {
		n.t.Fatal(err)
	}
}
