package stages_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/credentials"
	"github.com/podline/podline/cri"
	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/stages"
)

// pullRig is a puller against the fake runtime, whose pulls take latency.
type pullRig struct {
	fake *fake.Server
	rt   *countingImages
}

func newPullRig(t *testing.T, latency time.Duration, o fake.Options) *pullRig {
	t.Helper()
	o.Latency = map[string]time.Duration{"PullImage": latency}
	sock, srv := fake.Listen(t, o)
	rt, err := cri.Dial(context.Background(), sock, "", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return &pullRig{fake: srv, rt: &countingImages{ImageRuntime: rt}}
}

// countingImages records the most PullImage calls in progress at once.
type countingImages struct {
	stages.ImageRuntime
	now, peak atomic.Int32
}

func (c *countingImages) PullImage(ctx context.Context, image string, auth *runtimeapi.AuthConfig, sb *runtimeapi.PodSandboxConfig) (string, error) {
	n := c.now.Add(1)
	defer c.now.Add(-1)
	for p := c.peak.Load(); n > p && !c.peak.CompareAndSwap(p, n); p = c.peak.Load() {
	}
	return c.ImageRuntime.PullImage(ctx, image, auth, sb)
}

// pullAll runs one Pull per request at once and returns the results.
func pullAll(p *stages.ImagePuller, reqs []stages.PullRequest) []stages.PullResult {
	out := make([]stages.PullResult, len(reqs))
	var wg sync.WaitGroup
	for i, r := range reqs {
		wg.Add(1)
		go func() { defer wg.Done(); out[i] = p.Pull(context.Background(), r) }()
	}
	wg.Wait()
	return out
}

func repeat(n int, r stages.PullRequest) []stages.PullRequest {
	out := make([]stages.PullRequest, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func TestPullSharedByEveryWaiter(t *testing.T) {
	r := newPullRig(t, 200*time.Millisecond, fake.Options{})
	p := stages.NewImagePuller(r.rt, nil, true, 0)
	// Short and full forms of one image are one pull.
	reqs := repeat(500, stages.PullRequest{Image: "busybox:1.36", IfAbsent: true})
	reqs = append(reqs, repeat(500, stages.PullRequest{Image: "docker.io/library/busybox:1.36", IfAbsent: true})...)
	res := pullAll(p, reqs)
	if n := r.fake.Calls("PullImage"); n != 1 {
		t.Fatalf("PullImage called %d times for 1,000 waiters, want 1", n)
	}
	// A waiter the scheduler starts only after the pull ended finds the
	// image present (Pulled false); every other shares the one pull.
	shared, ref := 0, res[0].ImageRef
	for i, got := range res {
		if got.Err != nil || ref == "" || got.ImageRef != ref || (got.Pulled && got.Size == 0) {
			t.Fatalf("waiter %d: %+v, want the shared pull's image %q", i, got, ref)
		}
		if got.Pulled {
			shared++
		}
	}
	if shared == 0 {
		t.Fatal("no waiter saw the pull: every one found the image present")
	}
	// Later, with the image present, a pod that only needs it present
	// asks the runtime nothing more than whether it is there.
	if got := p.Pull(context.Background(), reqs[0]); got.Err != nil || got.Pulled || got.ImageRef != res[0].ImageRef {
		t.Fatalf("pull of a present image: %+v", got)
	}
	if n := r.fake.Calls("PullImage"); n != 1 {
		t.Fatalf("PullImage called %d times, want still 1", n)
	}
}

func TestPullFailureReachesEveryWaiter(t *testing.T) {
	r := newPullRig(t, 200*time.Millisecond, fake.Options{})
	r.fake.Inject("PullImage", codes.NotFound, 1)
	p := stages.NewImagePuller(r.rt, nil, true, 0)
	res := pullAll(p, repeat(300, stages.PullRequest{Image: "r.io/app:1", IfAbsent: true}))
	if n := r.fake.Calls("PullImage"); n != 1 {
		t.Fatalf("PullImage called %d times, want 1", n)
	}
	for i, got := range res {
		if !cri.IsNotFound(got.Err) || !strings.HasPrefix(got.Err.Error(), "rpc error: code = NotFound desc = ") {
			t.Fatalf("waiter %d: %v, want the runtime's NotFound in its own words", i, got.Err)
		}
	}
	// The failure is not kept: the next pod pulls again.
	if got := p.Pull(context.Background(), stages.PullRequest{Image: "r.io/app:1"}); got.Err != nil || !got.Pulled {
		t.Fatalf("pull after a failure: %+v", got)
	}
}

func TestPullLimitsBoundDifferentImages(t *testing.T) {
	for _, tc := range []struct {
		serialize   bool
		maxParallel int
		want        int32
	}{
		{true, 0, 1},
		{false, 2, 2},
		{false, 0, 5},
	} {
		t.Run(fmt.Sprintf("serialize=%v/max=%d", tc.serialize, tc.maxParallel), func(t *testing.T) {
			r := newPullRig(t, 100*time.Millisecond, fake.Options{})
			p := stages.NewImagePuller(r.rt, nil, tc.serialize, tc.maxParallel)
			var reqs []stages.PullRequest
			for i := range 5 {
				// Ten waiters per image: copies of one pull take no slot.
				reqs = append(reqs, repeat(10, stages.PullRequest{Image: fmt.Sprintf("r.io/app:%d", i)})...)
			}
			for _, got := range pullAll(p, reqs) {
				if got.Err != nil {
					t.Fatal(got.Err)
				}
			}
			if n := r.fake.Calls("PullImage"); n != 5 {
				t.Errorf("PullImage called %d times for 5 images, want 5", n)
			}
			if got := r.rt.peak.Load(); got != tc.want {
				t.Errorf("at most %d pulls at once, want %d", got, tc.want)
			}
		})
	}
}

func TestPullCredentialsInOrder(t *testing.T) {
	r := newPullRig(t, 0, fake.Options{ImageAuth: map[string]string{"r.io/private:1": "right:pw"}})
	p := stages.NewImagePuller(r.rt, nil, true, 0)
	wrong := credentials.Credential{Username: "wrong", Password: "pw"}
	right := credentials.Credential{Username: "right", Password: "pw"}

	got := p.Pull(context.Background(), stages.PullRequest{Image: "r.io/private:1", Credentials: []credentials.Credential{wrong, right}})
	if got.Err != nil || !got.Pulled {
		t.Fatalf("pull with a wrong then a right credential: %+v", got)
	}
	if n := r.fake.Calls("PullImage"); n != 2 {
		t.Fatalf("PullImage called %d times, want 2 (wrong, then right)", n)
	}
	got = p.Pull(context.Background(), stages.PullRequest{Image: "r.io/private:1", Credentials: []credentials.Credential{right, wrong}})
	if got.Err != nil || r.fake.Calls("PullImage") != 3 {
		t.Fatalf("the first credential that works ends the pull: %+v, %d calls", got, r.fake.Calls("PullImage"))
	}

	// Every credential refused: each error once, in the runtime's words.
	r.fake.RemoveImage(context.Background(), &runtimeapi.RemoveImageRequest{Image: &runtimeapi.ImageSpec{Image: "r.io/private:1"}})
	other := credentials.Credential{Username: "other", Password: "pw"}
	got = p.Pull(context.Background(), stages.PullRequest{Image: "r.io/private:1", Credentials: []credentials.Credential{wrong, other}})
	if got.Err == nil || !strings.Contains(got.Err.Error(), "401 Unauthorized") || strings.Count(got.Err.Error(), "rpc error") != 1 {
		t.Fatalf("all credentials refused: %v, want the 401 once", got.Err)
	}
	// Different credentials are different pulls: a pod without them does
	// not get the result of one that has them.
	res := pullAll(p, []stages.PullRequest{
		{Image: "r.io/private:1"},
		{Image: "r.io/private:1", Credentials: []credentials.Credential{right}},
	})
	if res[0].Err == nil || res[1].Err != nil {
		t.Fatalf("anonymous and authorized pulls of one image: %v, %v", res[0].Err, res[1].Err)
	}
}

func TestPullAlwaysNeverTakesASkippedPull(t *testing.T) {
	r := newPullRig(t, 0, fake.Options{Preloaded: []string{"r.io/app:1"}})
	p := stages.NewImagePuller(r.rt, nil, true, 0)
	if got := p.Pull(context.Background(), stages.PullRequest{Image: "r.io/app:1", IfAbsent: true}); got.Err != nil || got.Pulled {
		t.Fatalf("present image, IfAbsent: %+v", got)
	}
	if got := p.Pull(context.Background(), stages.PullRequest{Image: "r.io/app:1"}); got.Err != nil || !got.Pulled {
		t.Fatalf("present image, Always: %+v", got)
	}
	if n := r.fake.Calls("PullImage"); n != 1 {
		t.Fatalf("PullImage called %d times, want 1 (the Always one)", n)
	}
}

// A failed pull records an image only if it may have left it. A pull of
// a preloaded private image that the registry refuses leaves the image
// the node had, preloaded still; a pull whose outcome the runtime cannot
// tell leaves no image of the repository preloaded until the next pull of
// the image ends.
func TestFailedPullRecordsOnlyWhatItMayHaveLeft(t *testing.T) {
	r := newPullRig(t, 0, fake.Options{Preloaded: []string{"r.io/private:1", "r.io/private:2"},
		ImageAuth: map[string]string{"r.io/private:1": "u:pw"}})
	p := stages.NewImagePuller(r.rt, openRecords(t, t.TempDir(), ""), true, 0)
	mayUse := func(image string) string {
		t.Helper()
		img, err := r.rt.ImageStatus(context.Background(), image)
		if err != nil || img == nil {
			t.Fatalf("ImageStatus(%s): %v, %v", image, img, err)
		}
		return p.MayUse(image, img, v1.PullNever, func() []credentials.Credential { return nil }).String()
	}
	if got := p.Pull(context.Background(), stages.PullRequest{Image: "r.io/private:1"}); !strings.Contains(fmt.Sprint(got.Err), "401 Unauthorized") {
		t.Fatalf("pull without the credential: %v, want the registry's 401", got.Err)
	}
	if got := mayUse("r.io/private:1"); got != "use" {
		t.Errorf("preloaded image after a refused pull: %s, want use", got)
	}

	// The runtime fails the pull, and cannot say what it holds after it.
	r.fake.Inject("PullImage", codes.Unavailable, 1)
	r.fake.Inject("ImageStatus", codes.Unavailable, 2)
	if got := p.Pull(context.Background(), stages.PullRequest{Image: "r.io/private:3"}); got.Err == nil {
		t.Fatal("pull with the runtime unavailable: no error")
	}
	if got := mayUse("r.io/private:2"); got != "refuse" {
		t.Errorf("preloaded image of the repository after a pull of unknown outcome: %s, want refuse (not preloaded)", got)
	}
	if got := p.Pull(context.Background(), stages.PullRequest{Image: "r.io/private:3"}); got.Err != nil {
		t.Fatal(got.Err)
	}
	if got := mayUse("r.io/private:2"); got != "use" {
		t.Errorf("preloaded image of the repository after the next pull ended: %s, want use", got)
	}
}

func TestPullOutlivesAWaiterThatLeaves(t *testing.T) {
	r := newPullRig(t, 300*time.Millisecond, fake.Options{})
	p := stages.NewImagePuller(r.rt, nil, true, 0)
	req := stages.PullRequest{Image: "r.io/app:1"}
	ctx, cancel := context.WithCancel(context.Background())
	left := make(chan stages.PullResult)
	go func() { left <- p.Pull(ctx, req) }()
	time.Sleep(50 * time.Millisecond)
	stay := make(chan stages.PullResult)
	go func() { stay <- p.Pull(context.Background(), req) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	if got := <-left; !errors.Is(got.Err, context.Canceled) {
		t.Fatalf("the waiter that left: %v, want canceled", got.Err)
	}
	if got := <-stay; got.Err != nil || !got.Pulled {
		t.Fatalf("the waiter that stayed: %+v", got)
	}
	if n := r.fake.Calls("PullImage"); n != 1 {
		t.Fatalf("PullImage called %d times, want 1", n)
	}

	// With no one left waiting, the pull is cancelled.
	ctx, cancel = context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	if got := p.Pull(ctx, stages.PullRequest{Image: "r.io/app:2"}); !errors.Is(got.Err, context.Canceled) {
		t.Fatalf("lone waiter that left: %v", got.Err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for r.rt.now.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the pull nobody waits for still runs")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
