package stages_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cri"
	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/pullrecords"
	"github.com/podline/podline/stages"
)

// openRecords is the node's records of image pulls in dir.
func openRecords(t *testing.T, dir, policy string, allowlist ...string) *pullrecords.Store {
	t.Helper()
	p, err := pullrecords.NewPolicy(policy, allowlist)
	if err != nil {
		t.Fatal(err)
	}
	s, err := pullrecords.Open(dir, p, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// imagePod is a pod of namespace ns running image with a pull policy and
// pull secrets.
func imagePod(name, ns, image string, policy v1.PullPolicy, secrets ...string) *v1.Pod {
	return testPod(name, func(p *v1.Pod) {
		p.Namespace, p.UID = ns, types.UID("uid-"+ns+"-"+name)
		p.Spec.Containers[0].Image, p.Spec.Containers[0].ImagePullPolicy = image, policy
		for _, s := range secrets {
			p.Spec.ImagePullSecrets = append(p.Spec.ImagePullSecrets, v1.LocalObjectReference{Name: s})
		}
	})
}

func (h *harness) waitWaiting(p *v1.Pod, reason string) *v1.ContainerStateWaiting {
	h.t.Helper()
	st := h.waitFor(p.UID, reason, func(st v1.PodStatus) bool {
		w := st.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == reason
	})
	return st.ContainerStatuses[0].State.Waiting
}

// A private image pulled with namespace a's pull secret is not run from
// namespace b on the strength of being on the node: without a secret, or
// with a wrong one, the pod pulls and the registry refuses it
// (ErrImagePull with its answer); with pull policy Never it is told the
// image is absent. The same credential in b's own secret runs the pod
// without a pull, and so does a's secret again. A restart of podline
// (new records store and pipeline over the same directory and runtime)
// answers the same.
func TestPrivateImageIsNotUsedFromAnotherNamespace(t *testing.T) {
	const image = "r.io/private:1"
	sock, srv := fake.Listen(t, fake.Options{ImageAuth: map[string]string{image: "u:pw"}})
	dir := t.TempDir()
	secrets := secretsByName{
		"a/pull":  pullSecret("a", "pull", "r.io", "u:pw"),
		"b/right": pullSecret("b", "right", "r.io", "u:pw"),
		"b/wrong": pullSecret("b", "wrong", "r.io", "u:nope"),
	}
	secrets["a/pull"].UID, secrets["b/right"].UID, secrets["b/wrong"].UID = "uid-a-pull", "uid-b-right", "uid-b-wrong"
	log := &eventLog{}
	h := newHarness(t, harnessOpts{socket: sock, srv: srv, events: log, pullSecrets: secrets, records: openRecords(t, dir, "")})

	a := imagePod("first", "a", image, v1.PullIfNotPresent, "pull")
	h.pipe.Upsert(a)
	h.waitRunning(a.UID)
	pulls := srv.Calls("PullImage")

	refusedPulls := func(h *harness, round string) {
		t.Helper()
		none := imagePod("none-"+round, "b", image, v1.PullIfNotPresent)
		wrong := imagePod("wrong-"+round, "b", image, v1.PullIfNotPresent, "wrong")
		never := imagePod("never-"+round, "b", image, v1.PullNever)
		for _, p := range []*v1.Pod{none, wrong, never} {
			h.pipe.Upsert(p)
		}
		for _, p := range []*v1.Pod{none, wrong} {
			w := h.waitWaiting(p, "ErrImagePull")
			if !strings.Contains(w.Message, "401 Unauthorized") {
				t.Errorf("%s: pod %s: ErrImagePull %q, want the registry's 401", round, p.Name, w.Message)
			}
		}
		w := h.waitWaiting(never, "ErrImageNeverPull")
		if want := `Container image "r.io/private:1" is not present with pull policy of Never`; w.Message != want {
			t.Errorf("%s: pull policy Never: %q, want %q", round, w.Message, want)
		}
		for _, p := range []*v1.Pod{none, wrong, never} {
			h.pipe.Remove(p.UID)
		}
	}
	refusedPulls(h, "before")
	if got := srv.Calls("PullImage") - pulls; got != 2 {
		t.Errorf("pods of namespace b asked the registry %d times, want 2 (no secret, the wrong one; Never does not pull)", got)
	}

	right := imagePod("right", "b", image, v1.PullIfNotPresent, "right")
	again := imagePod("again", "a", image, v1.PullIfNotPresent, "pull")
	before := srv.Calls("PullImage")
	for _, p := range []*v1.Pod{right, again} {
		h.pipe.Upsert(p)
		h.waitRunning(p.UID)
	}
	log.wait(t, "right Normal Pulled app: Container image \"r.io/private:1\" already present on machine and can be accessed by the pod")
	if got := srv.Calls("PullImage") - before; got != 0 {
		t.Errorf("pods with the credential the image was pulled with pulled %d times, want 0", got)
	}

	h.stop()
	h = newHarness(t, harnessOpts{socket: sock, srv: srv, events: log, pullSecrets: secrets, records: openRecords(t, dir, "")})
	refusedPulls(h, "after")
	after := imagePod("after", "a", image, v1.PullNever, "pull")
	h.pipe.Upsert(after)
	h.waitRunning(after.UID)
}

// A pod without the credentials that found the image absent while
// another pod's pull of it ran does not take that pull's image for its
// own: its own pull, which waited for the first (one pull at a time),
// finds the image present, but goes to the registry all the same.
func TestConcurrentPullLendsNoImage(t *testing.T) {
	const image = "r.io/private:1"
	srv := fake.Options{ImageAuth: map[string]string{image: "u:pw"}, Latency: map[string]time.Duration{"PullImage": 300 * time.Millisecond}}
	secrets := secretsByName{"a/pull": pullSecret("a", "pull", "r.io", "u:pw")}
	h := newHarness(t, harnessOpts{fake: srv, pullSecrets: secrets, records: openRecords(t, t.TempDir(), "")})
	a, b := imagePod("with", "a", image, v1.PullIfNotPresent, "pull"), imagePod("without", "b", image, v1.PullIfNotPresent)
	h.pipe.Upsert(a)
	deadline := time.Now().Add(5 * time.Second)
	for h.fake.Calls("PullImage") == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	h.pipe.Upsert(b)
	h.waitRunning(a.UID)
	if w := h.waitWaiting(b, "ErrImagePull"); !strings.Contains(w.Message, "401 Unauthorized") {
		t.Errorf("pod without credentials: ErrImagePull %q, want the registry's 401", w.Message)
	}
}

// storesThenCanceled is a runtime whose first pull stores the image and
// then, once the pull is cancelled, answers Canceled: containerd when the
// last pod waiting for a long pull went away after the image was created.
type storesThenCanceled struct {
	stages.ImageRuntime
	once   sync.Once
	stored chan struct{}
}

func (r *storesThenCanceled) PullImage(ctx context.Context, image string, auth *runtimeapi.AuthConfig, sb *runtimeapi.PodSandboxConfig) (string, error) {
	first := false
	r.once.Do(func() { first = true })
	if !first {
		return r.ImageRuntime.PullImage(ctx, image, auth, sb)
	}
	if _, err := r.ImageRuntime.PullImage(context.WithoutCancel(ctx), image, auth, sb); err != nil {
		return "", err
	}
	close(r.stored)
	<-ctx.Done()
	return "", status.Error(codes.Canceled, "context canceled")
}

// A pull cancelled after the runtime stored the image (its only pod was
// deleted) does not leave a preloaded image behind: a pod of another
// namespace without the secret is told the image is absent under pull
// policy Never, and its own pull is refused by the registry.
func TestCancelledPullLeavesNoPreloadedImage(t *testing.T) {
	const image = "r.io/private:1"
	sock, srv := fake.Listen(t, fake.Options{ImageAuth: map[string]string{image: "u:pw"}})
	rt, err := cri.Dial(context.Background(), sock, "", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	dir := t.TempDir()
	runtime := &storesThenCanceled{ImageRuntime: rt, stored: make(chan struct{})}
	secrets := secretsByName{"a/pull": pullSecret("a", "pull", "r.io", "u:pw")}
	h := newHarness(t, harnessOpts{socket: sock, srv: srv, pullSecrets: secrets,
		pulls: stages.NewImagePuller(runtime, openRecords(t, dir, ""), true, 0)})

	first := imagePod("first", "a", image, v1.PullIfNotPresent, "pull")
	h.pipe.Upsert(first)
	select {
	case <-runtime.stored:
	case <-time.After(10 * time.Second):
		t.Fatal("the pull never reached the runtime")
	}
	h.pipe.Remove(first.UID)
	// The pull has ended once its intent is gone.
	deadline := time.Now().Add(10 * time.Second)
	for entries, _ := os.ReadDir(filepath.Join(dir, "pulling")); len(entries) > 0; entries, _ = os.ReadDir(filepath.Join(dir, "pulling")) {
		if time.Now().After(deadline) {
			t.Fatalf("the cancelled pull's intent is still there: %v", entries)
		}
		time.Sleep(5 * time.Millisecond)
	}

	never := imagePod("never", "b", image, v1.PullNever)
	none := imagePod("none", "b", image, v1.PullIfNotPresent)
	h.pipe.Upsert(never)
	h.pipe.Upsert(none)
	if w := h.waitWaiting(never, "ErrImageNeverPull"); w.Message != `Container image "r.io/private:1" is not present with pull policy of Never` {
		t.Errorf("pull policy Never: %q", w.Message)
	}
	if w := h.waitWaiting(none, "ErrImagePull"); !strings.Contains(w.Message, "401 Unauthorized") {
		t.Errorf("no secret: ErrImagePull %q, want the registry's 401", w.Message)
	}
}

// A pod that names a private image by its ID, which the runtime resolves,
// is not exempt by an allowlist entry its name matches
// (docker.io/library/* takes in "sha256:<id>"): it is told the image is
// absent under pull policy Never.
func TestPrivateImageNamedByItsIDIsNotAllowlisted(t *testing.T) {
	const image = "r.io/private:1"
	secrets := secretsByName{"a/pull": pullSecret("a", "pull", "r.io", "u:pw")}
	h := newHarness(t, harnessOpts{fake: fake.Options{ImageAuth: map[string]string{image: "u:pw"}}, pullSecrets: secrets,
		records: openRecords(t, t.TempDir(), pullrecords.NeverVerifyAllowlistedImages, "docker.io/library/*")})
	first := imagePod("first", "a", image, v1.PullIfNotPresent, "pull")
	h.pipe.Upsert(first)
	h.waitRunning(first.UID)
	img, err := h.rt.ImageStatus(context.Background(), image)
	if err != nil || img == nil {
		t.Fatalf("ImageStatus(%s): %v, %v", image, img, err)
	}
	byID := imagePod("by-id", "b", img.GetId(), v1.PullNever)
	h.pipe.Upsert(byID)
	if w := h.waitWaiting(byID, "ErrImageNeverPull"); w.Message != fmt.Sprintf("Container image %q is not present with pull policy of Never", img.GetId()) {
		t.Errorf("pull policy Never: %q", w.Message)
	}
}

// The policies for an image the node agent did not pull (preloaded), with
// pull policy Never, where verifying would need a pull: only the policy
// decides, as on a kubelet's node.
func TestPreloadedImagesUnderEachPolicy(t *testing.T) {
	for _, tc := range []struct {
		policy    string
		allowlist []string
		runs      bool
	}{
		{pullrecords.NeverVerify, nil, true},
		{pullrecords.NeverVerifyPreloadedImages, nil, true},
		{pullrecords.NeverVerifyAllowlistedImages, []string{"docker.io/library/busybox"}, true},
		{pullrecords.NeverVerifyAllowlistedImages, []string{"docker.io/library/*"}, true},
		{pullrecords.NeverVerifyAllowlistedImages, []string{"docker.io/library/alpine", "r.io/*"}, false},
		{pullrecords.AlwaysVerify, nil, false},
	} {
		t.Run(tc.policy+strings.Join(tc.allowlist, ","), func(t *testing.T) {
			h := newHarness(t, harnessOpts{fake: fake.Options{Preloaded: []string{"docker.io/library/busybox:1.36"}},
				records: openRecords(t, t.TempDir(), tc.policy, tc.allowlist...)})
			p := imagePod("local", "default", "busybox:1.36", v1.PullNever)
			h.pipe.Upsert(p)
			if tc.runs {
				h.waitRunning(p.UID)
				return
			}
			if w := h.waitWaiting(p, "ErrImageNeverPull"); w.Message != `Container image "busybox:1.36" is not present with pull policy of Never` {
				t.Errorf("ErrImageNeverPull %q", w.Message)
			}
		})
	}
}

// Under AlwaysVerify a preloaded image is pulled once; the anonymous pull
// that succeeded serves every pod after it, without another.
func TestAlwaysVerifyPullsAPreloadedImageOnce(t *testing.T) {
	h := newHarness(t, harnessOpts{fake: fake.Options{Preloaded: []string{"docker.io/library/busybox:1.36"}},
		records: openRecords(t, t.TempDir(), pullrecords.AlwaysVerify)})
	first := imagePod("first", "default", "busybox:1.36", v1.PullIfNotPresent)
	h.pipe.Upsert(first)
	h.waitRunning(first.UID)
	second := imagePod("second", "other", "docker.io/library/busybox:1.36", v1.PullNever)
	h.pipe.Upsert(second)
	h.waitRunning(second.UID)
	if n := h.fake.Calls("PullImage"); n != 1 {
		t.Errorf("PullImage called %d times, want 1", n)
	}
}

// The check costs a start no runtime call: pods of an image the records
// answer for make the one ImageStatus call each they made before, and no
// other image call.
func TestCheckAddsNoRuntimeCall(t *testing.T) {
	const image = "r.io/private:1"
	secrets := secretsByName{"a/pull": pullSecret("a", "pull", "r.io", "u:pw")}
	h := newHarness(t, harnessOpts{fake: fake.Options{ImageAuth: map[string]string{image: "u:pw"}}, pullSecrets: secrets,
		records: openRecords(t, t.TempDir(), "")})
	first := imagePod("first", "a", image, v1.PullIfNotPresent, "pull")
	h.pipe.Upsert(first)
	h.waitRunning(first.UID)
	status, pulls, lists := h.fake.Calls("ImageStatus"), h.fake.Calls("PullImage"), h.fake.Calls("ListImages")
	const n = 20
	for i := range n {
		p := imagePod(fmt.Sprintf("p-%02d", i), "a", image, v1.PullIfNotPresent, "pull")
		h.pipe.Upsert(p)
		h.waitRunning(p.UID)
	}
	if got := h.fake.Calls("ImageStatus") - status; got != n {
		t.Errorf("%d pod starts made %d ImageStatus calls, want one each", n, got)
	}
	if got := h.fake.Calls("PullImage") - pulls + h.fake.Calls("ListImages") - lists; got != 0 {
		t.Errorf("%d pod starts made %d PullImage and ListImages calls, want none", n, got)
	}
}
