package stages_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/stages"
)

// Issue 17: every pod that found the image absent called PullImage while
// the first pull still ran (44 calls for one image at 1,000 pods).
func TestThousandPodsOfOneAbsentImagePullItOnce(t *testing.T) {
	const n = 1000
	h := newHarness(t, harnessOpts{
		window: 1024, maxPods: n, workers: stages.DefaultWorkers, relist: time.Second,
		fake: fake.Options{Latency: map[string]time.Duration{"PullImage": 300 * time.Millisecond}},
	})
	pods := make([]*v1.Pod, n)
	for i := range pods {
		pods[i] = testPod(fmt.Sprintf("p-%04d", i), func(p *v1.Pod) {
			p.Spec.Containers[0].Image = "r.io/app:1"
			p.Spec.Containers[0].Resources = v1.ResourceRequirements{}
		})
		h.pipe.Upsert(pods[i])
	}
	for _, p := range pods {
		h.waitRunningFast(p.UID)
	}
	if got := h.fake.Calls("PullImage"); got != 1 {
		t.Fatalf("PullImage called %d times for %d pods of one absent image, want 1", got, n)
	}
}

// A refused pull shows as the kubelet shows it: ErrImagePull with the
// runtime's message and Failed events, then ImagePullBackOff repeating it.
func TestRefusedPullBacksOffWithTheRegistrysMessage(t *testing.T) {
	log := &eventLog{}
	h := newHarness(t, harnessOpts{events: log, fake: fake.Options{ImageAuth: map[string]string{"r.io/private:1": "u:pw"}}})
	pod := testPod("private", func(p *v1.Pod) { p.Spec.Containers[0].Image = "r.io/private:1" })
	h.pipe.Upsert(pod)
	waiting := func(reason string) *v1.ContainerStateWaiting {
		st := h.waitFor(pod.UID, reason, func(st v1.PodStatus) bool {
			w := st.ContainerStatuses[0].State.Waiting
			return w != nil && w.Reason == reason
		})
		return st.ContainerStatuses[0].State.Waiting
	}
	w := waiting("ErrImagePull")
	if !strings.HasPrefix(w.Message, "rpc error: code = Unknown desc = failed to pull and unpack image") || !strings.Contains(w.Message, "401 Unauthorized") {
		t.Errorf("ErrImagePull message %q, want the runtime's own", w.Message)
	}
	log.wait(t, "Warning Failed app: Failed to pull image \"r.io/private:1\": rpc error", "401 Unauthorized")
	log.wait(t, "Warning Failed app: Error: ErrImagePull")
	// ErrImagePull stays for the kubelet's 10 s retry, not the pass's
	// half-second step back-off.
	time.Sleep(time.Second)
	if st, _, _ := h.store.Status(pod.UID); st.ContainerStatuses[0].State.Waiting.Reason != "ErrImagePull" {
		t.Errorf("a second after the refused pull: %+v, want ErrImagePull still", st.ContainerStatuses[0].State)
	}
	// Any pass within the image's back-off (here one asked for) shows it.
	h.pipe.Sync(pod.UID)
	w = waiting("ImagePullBackOff")
	if want := `Back-off pulling image "r.io/private:1": ErrImagePull: rpc error`; !strings.HasPrefix(w.Message, want) || !strings.Contains(w.Message, "401 Unauthorized") {
		t.Errorf("ImagePullBackOff message %q, want %q and the registry's answer", w.Message, want)
	}
	log.wait(t, "Normal BackOff app: Back-off pulling image \"r.io/private:1\"")
	log.wait(t, "Warning Failed app: Error: ImagePullBackOff")
	if n := h.fake.Calls("PullImage"); n != 1 {
		t.Errorf("PullImage called %d times within the first back-off, want 1", n)
	}
}

// secretsByName is a PullSecretSource over fixed secrets.
type secretsByName map[string]*v1.Secret

func (s secretsByName) PullSecret(_ context.Context, ns, name string) (*v1.Secret, error) {
	if sec := s[ns+"/"+name]; sec != nil {
		return sec, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "secrets"}, name)
}

func pullSecret(ns, name, registry, userPassword string) *v1.Secret {
	auth := base64.StdEncoding.EncodeToString([]byte(userPassword))
	return &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type:       v1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{v1.DockerConfigJsonKey: []byte(`{"auths":{"` + registry + `":{"auth":"` + auth + `"}}}`)},
	}
}

// The pod's pull secrets reach the runtime; one that cannot be read is
// reported and the pull goes on with the others; the Pulled event has the
// kubelet's wording with the image size.
func TestPullSecretsReachTheRuntime(t *testing.T) {
	log := &eventLog{}
	h := newHarness(t, harnessOpts{
		events:      log,
		fake:        fake.Options{ImageAuth: map[string]string{"r.io/private:1": "u:pw"}},
		pullSecrets: secretsByName{"default/wrong": pullSecret("default", "wrong", "r.io", "u:nope"), "default/right": pullSecret("default", "right", "https://r.io/v1/", "u:pw")},
	})
	pod := testPod("private", func(p *v1.Pod) {
		p.Spec.Containers[0].Image = "r.io/private:1"
		p.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: "missing"}, {Name: "wrong"}, {Name: ""}, {Name: "right"}}
	})
	h.pipe.Upsert(pod)
	h.waitRunning(pod.UID)
	log.wait(t, "Warning FailedToRetrieveImagePullSecret : Unable to retrieve some image pull secrets (missing); attempting to pull the image may not succeed.")
	events := log.wait(t, "Normal Pulled app: Successfully pulled image \"r.io/private:1\"")
	pulled := regexp.MustCompile(`Successfully pulled image "r\.io/private:1" in [0-9.]+m?s \([0-9.]+m?s including waiting\)\. Image size: [1-9][0-9]* bytes\.$`)
	found := false
	for _, e := range events {
		found = found || pulled.MatchString(e)
	}
	if !found {
		t.Errorf("no Pulled event matching %s in:\n%s", pulled, strings.Join(events, "\n"))
	}
	if n := h.fake.Calls("PullImage"); n != 2 {
		t.Errorf("PullImage called %d times, want 2 (the wrong secret, then the right one)", n)
	}
}

func TestInvalidImageNameNeverReachesTheRuntime(t *testing.T) {
	log := &eventLog{}
	h := newHarness(t, harnessOpts{events: log})
	pod := testPod("bad", func(p *v1.Pod) { p.Spec.Containers[0].Image = "Bad/Name:1" })
	h.pipe.Upsert(pod)
	st := h.waitFor(pod.UID, "InvalidImageName", func(st v1.PodStatus) bool {
		w := st.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == "InvalidImageName"
	})
	if msg := st.ContainerStatuses[0].State.Waiting.Message; !strings.Contains(msg, `couldn't parse image name "Bad/Name:1"`) {
		t.Errorf("InvalidImageName message %q", msg)
	}
	log.wait(t, "Warning InspectFailed app: Failed to apply default image tag \"Bad/Name:1\"")
	if n := h.fake.Calls("PullImage") + h.fake.Calls("ImageStatus"); n != 0 {
		t.Errorf("the runtime was asked %d times about an invalid name", n)
	}
}
