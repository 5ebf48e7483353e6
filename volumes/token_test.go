package volumes

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// fakeTimers is a timerQueue that records the delays asked for, keeping
// the earliest per pod as delay.Queue does.
type fakeTimers struct {
	mu        sync.Mutex
	due       map[types.UID]time.Duration
	cancelled []types.UID
}

func (f *fakeTimers) After(uid types.UID, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if old, ok := f.due[uid]; !ok || d < old {
		f.due[uid] = d
	}
}

func (f *fakeTimers) Cancel(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.due, uid)
	f.cancelled = append(f.cancelled, uid)
}

// fire takes uid's timer as the queue would when it falls due.
func (f *fakeTimers) fire(t *testing.T, s *Source, uid types.UID) time.Duration {
	t.Helper()
	f.mu.Lock()
	d, ok := f.due[uid]
	delete(f.due, uid)
	f.mu.Unlock()
	if !ok {
		t.Fatalf("no token timer for %s", uid)
	}
	s.tokenDue(uid)
	return d
}

func tokenVolume(seconds int64) *v1.Volume {
	return &v1.Volume{Name: "tok", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
		{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &seconds}},
	}}}}
}

// A token is refreshed by its timer at 80% of its lifetime, or after a
// day for a longer one, on a fake clock: the timer makes the pod stale
// and asks for a pass, whose setup requests the new token and sets the
// timer for it.
func TestTokenRefreshTiming(t *testing.T) {
	f := func(seconds int64, wantDue time.Duration) {
		t.Helper()
		ctx := context.Background()
		s, ti, clk := projectedSource(t)
		timers := &fakeTimers{due: map[types.UID]time.Duration{}}
		s.timers = timers
		passes := &staleLog{}
		s.OnStale(passes.add)
		pod := testPod()
		vol := tokenVolume(seconds)
		pod.Spec.Volumes = []v1.Volume{*vol}
		dir := volumeDir(t)
		setUp := func() {
			t.Helper()
			mark, _ := s.Stale(pod)
			if err := s.SetUp(ctx, pod, vol, dir); err != nil {
				t.Fatal(err)
			}
			s.Refreshed(pod.UID, mark)
		}
		setUp()
		if _, stale := s.Stale(pod); stale {
			t.Fatal("stale right after setup")
		}
		for round := 1; round <= 3; round++ {
			clk.add(wantDue)
			if d := timers.fire(t, s, pod.UID); d != wantDue {
				t.Fatalf("%ds token, round %d: timer set for %s, want %s", seconds, round, d, wantDue)
			}
			if got := passes.wait(t, round); got[round-1] != pod.UID {
				t.Fatalf("passes asked for %v", got)
			}
			if _, stale := s.Stale(pod); !stale {
				t.Fatalf("round %d: not stale when the token fell due", round)
			}
			setUp()
			if ti.count() != round+1 {
				t.Fatalf("round %d: %d token requests, want %d", round, ti.count(), round+1)
			}
			want := fakeJWT(clk.now(), clk.now().Add(time.Duration(seconds)*time.Second), round+1)
			if got := contents(t, dir)["token"]; got != want {
				t.Fatalf("round %d: the volume holds %q, want the new token", round, got)
			}
		}
		s.Release(pod.UID)
		if len(timers.cancelled) != 1 || timers.cancelled[0] != pod.UID {
			t.Fatalf("release cancelled %v", timers.cancelled)
		}
	}
	f(3600, 48*time.Minute)
	f(600, 8*time.Minute)
	f(48*3600, 24*time.Hour)
}

// While a refresh fails, a token that has not expired stays in the volume
// and the refresh is retried soon; once it has expired, the setup fails.
func TestTokenRefreshFailureKeepsAValidToken(t *testing.T) {
	ctx := context.Background()
	s, ti, clk := projectedSource(t)
	timers := &fakeTimers{due: map[types.UID]time.Duration{}}
	s.timers = timers
	pod := testPod()
	vol := tokenVolume(3600)
	dir := volumeDir(t)
	if err := s.SetUp(ctx, pod, vol, dir); err != nil {
		t.Fatal(err)
	}
	first := contents(t, dir)["token"]
	ti.fail = errors.New("API server away")
	clk.add(50 * time.Minute)
	timers.fire(t, s, pod.UID)
	if err := s.SetUp(ctx, pod, vol, dir); err != nil {
		t.Fatalf("a failed refresh of a valid token: %v", err)
	}
	if got := contents(t, dir)["token"]; got != first {
		t.Fatal("the token changed although no new one was issued")
	}
	if d := timers.fire(t, s, pod.UID); d != tokenRetry {
		t.Fatalf("retry in %s, want %s", d, tokenRetry)
	}
	clk.add(11 * time.Minute) // past exp
	if err := s.SetUp(ctx, pod, vol, dir); err == nil {
		t.Fatal("an expired token was kept")
	}
}

// jwtWith is a token with the claims readTokenLife reads.
func jwtWith(claims string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"RS256"}`)) + "." + enc.EncodeToString([]byte(claims)) + ".sig"
}

func TestReadTokenLife(t *testing.T) {
	iat := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := func(name, token string, wantRefresh time.Duration, wantOK bool) {
		t.Helper()
		life, ok := readTokenLife([]byte(token))
		if ok != wantOK || (ok && life.refreshAt.Sub(iat) != wantRefresh) {
			t.Errorf("%s: refresh after %s, ok %v; want %s, %v", name, life.refreshAt.Sub(iat), ok, wantRefresh, wantOK)
		}
	}
	year := iat.Add(365 * 24 * time.Hour).Unix()
	f("an hour", fakeJWT(iat, iat.Add(time.Hour), 1), 48*time.Minute, true)
	f("a year, without warnafter", fakeJWT(iat, time.Unix(year, 0), 1), 24*time.Hour, true)
	// kube-api-access tokens: exp extended to a year, warnafter the hour
	// asked for.
	f("a year, warnafter an hour", jwtWith(fmt.Sprintf(`{"iat":%d,"exp":%d,"kubernetes.io":{"warnafter":%d}}`,
		iat.Unix(), year, iat.Add(3607*time.Second).Unix())), 3607*time.Second*80/100, true)
	f("warnafter past exp is ignored", jwtWith(fmt.Sprintf(`{"iat":%d,"exp":%d,"kubernetes.io":{"warnafter":%d}}`,
		iat.Unix(), iat.Add(time.Hour).Unix(), iat.Add(2*time.Hour).Unix())), 48*time.Minute, true)
	// expirationSeconds may be up to 2^32: 80 % of it overflowed.
	f("2^32 seconds", fakeJWT(iat, iat.Add((1<<32)*time.Second), 1), 24*time.Hour, true)
	f("no iat", jwtWith(fmt.Sprintf(`{"exp":%d}`, year)), 0, false)
	f("not a JWT", "opaque", 0, false)
}

// The token's iat and exp are the API server's clock. This node's clock
// set an hour off from it (set back, or forward, after the node synced)
// must not move the refresh: a one-hour token is refreshed 48 minutes
// after it was asked for, on the monotonic clock, and the next pass
// replaces it then.
func TestTokenRefreshIgnoresTheNodesWallClock(t *testing.T) {
	f := func(name string, serverAhead time.Duration) {
		t.Helper()
		ctx := context.Background()
		s, ti, _ := projectedSource(t)
		timers := &fakeTimers{due: map[types.UID]time.Duration{}}
		s.timers = timers
		base := time.Now()
		var elapsed time.Duration
		s.now = func() time.Time { return base.Add(elapsed) }
		ti.now = func() time.Time { return base.Round(0).Add(elapsed + serverAhead) }
		pod := testPod()
		vol := tokenVolume(3600)
		pod.Spec.Volumes = []v1.Volume{*vol}
		dir := volumeDir(t)
		if err := s.SetUp(ctx, pod, vol, dir); err != nil {
			t.Fatal(err)
		}
		elapsed = 48 * time.Minute
		if d := timers.fire(t, s, pod.UID); d != 48*time.Minute {
			t.Fatalf("%s: timer set for %s, want 48m", name, d)
		}
		if err := s.SetUp(ctx, pod, vol, dir); err != nil {
			t.Fatal(err)
		}
		if n := ti.count(); n != 2 {
			t.Fatalf("%s: %d token requests after 48 minutes, want 2", name, n)
		}
		if d := timers.fire(t, s, pod.UID); d != 48*time.Minute {
			t.Fatalf("%s: the new token's timer set for %s, want 48m", name, d)
		}
	}
	f("node clock set back an hour", time.Hour)
	f("node clock set forward an hour", -time.Hour)
	f("clocks agree", 0)
}
