//go:build e2e

package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pods pull a private image from the registry with the credentials of
// their imagePullSecrets, as on a kubelet's node: a dockerconfigjson or
// dockercfg secret with the right password runs the pod (by tag and by
// digest) and the Pulled event carries the image size; without a secret,
// with a wrong password or a tag the registry does not have, the pod
// waits in ErrImagePull then ImagePullBackOff with the registry's answer,
// which a Failed event repeats. A secret that does not exist is reported
// and the pull goes on with the others.
func TestClusterImagePullSecrets(t *testing.T) {
	r := needRegistry(t)
	n := startNode(t)
	n.waitReady(60 * time.Second)

	for _, s := range []*v1.Secret{
		{
			ObjectMeta: metav1.ObjectMeta{Name: "right", Namespace: n.name},
			Type:       v1.SecretTypeDockerConfigJson,
			Data:       map[string][]byte{v1.DockerConfigJsonKey: r.dockerConfigJSON(r.user, r.password)},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Name: "wrong", Namespace: n.name},
			Type:       v1.SecretTypeDockerConfigJson,
			Data:       map[string][]byte{v1.DockerConfigJsonKey: r.dockerConfigJSON(r.user, "not-"+r.password)},
		},
		{
			// The older form: the auths map alone, keyed by a URL.
			ObjectMeta: metav1.ObjectMeta{Name: "legacy", Namespace: n.name},
			Type:       v1.SecretTypeDockercfg,
			Data: map[string][]byte{v1.DockerConfigKey: []byte(fmt.Sprintf(`{"https://%s/v2/":{"username":%q,"password":%q}}`,
				r.addr, r.user, r.password))},
		},
	} {
		if _, err := n.cp.admin.CoreV1().Secrets(n.name).Create(apiCtx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tagged := r.busybox + ":1.36"
	pullPod := func(name, image string, policy v1.PullPolicy, secrets ...string) *v1.Pod {
		p := n.apiPod(name, "while true; do sleep 1; done")
		p.Spec.Containers[0].Image = image
		p.Spec.Containers[0].ImagePullPolicy = policy
		for _, s := range secrets {
			p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, v1.LocalObjectReference{Name: s})
		}
		return n.createPod(p)
	}
	// Always: every pod goes to the registry, whatever an earlier test
	// left in the runtime.
	right := pullPod("right", tagged, v1.PullAlways, "missing", "right")
	legacy := pullPod("legacy", r.busybox, "", "legacy") // ":latest": Always by default
	digest := pullPod("digest", r.busybox+"@"+r.digest, "", "right")
	anonymous := pullPod("anonymous", tagged, v1.PullAlways)
	wrong := pullPod("wrong", tagged, v1.PullAlways, "wrong")
	missingTag := pullPod("missing-tag", r.busybox+":no-such-tag", "", "right")

	for _, p := range []*v1.Pod{right, legacy, digest} {
		got := n.waitAPIPod(n.name, p.Name, "Running", 90*time.Second, podRunning)
		if id := got.Status.ContainerStatuses[0].ImageID; id == "" {
			t.Errorf("pod %s: no image ID in its status", p.Name)
		}
	}
	n.waitEvent(right, "Normal Pulled spec.containers{app}", fmt.Sprintf("Successfully pulled image %q in ", tagged))
	pulled := regexp.MustCompile(`Successfully pulled image "[^"]+" in [0-9.]+(µs|ms|s) \([0-9.]+(µs|ms|s) including waiting\)\. Image size: [1-9][0-9]* bytes\.$`)
	for _, e := range n.podEvents(right) {
		if strings.Contains(e, "Normal Pulled") {
			t.Logf("event: %s", e)
			if !pulled.MatchString(e) {
				t.Errorf("Pulled event %q does not match %s", e, pulled)
			}
		}
	}
	n.waitEvent(right, "Warning FailedToRetrieveImagePullSecret", "Unable to retrieve some image pull secrets (missing)")

	for _, tc := range []struct {
		pod  *v1.Pod
		want []string // in the ErrImagePull message and the Failed event
	}{
		{anonymous, []string{"rpc error: code = ", tagged, "authorization"}},
		{wrong, []string{"rpc error: code = ", tagged, "401 Unauthorized"}},
		{missingTag, []string{"rpc error: code = NotFound", r.busybox + ":no-such-tag", "not found"}},
	} {
		p := n.waitAPIPod(n.name, tc.pod.Name, "ErrImagePull", 60*time.Second, pullWaitIs("ErrImagePull"))
		msg := pullWaitMessage(p)
		t.Logf("%s: ErrImagePull: %s", p.Name, msg)
		if !containsAll(msg, tc.want) {
			t.Errorf("pod %s: ErrImagePull message %q, want %q", p.Name, msg, tc.want)
		}
		image := p.Spec.Containers[0].Image
		n.waitEvent(p, "Warning Failed spec.containers{app}", fmt.Sprintf("Failed to pull image %q: %s", image, msg))
		n.waitEvent(p, "Warning Failed spec.containers{app}", "Error: ErrImagePull")
		p = n.waitAPIPod(n.name, tc.pod.Name, "ImagePullBackOff", 60*time.Second, pullWaitIs("ImagePullBackOff"))
		if want := fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", image, msg); pullWaitMessage(p) != want {
			t.Errorf("pod %s: ImagePullBackOff message %q, want %q", p.Name, pullWaitMessage(p), want)
		}
		n.waitEvent(p, "Normal BackOff spec.containers{app}", fmt.Sprintf("Back-off pulling image %q", image))
		if p.Status.Phase != v1.PodPending {
			t.Errorf("pod %s: phase %s, want Pending", p.Name, p.Status.Phase)
		}
	}
}
