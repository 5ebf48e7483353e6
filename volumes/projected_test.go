package volumes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
)

// kubeAPIAccess is the volume the API server adds to every pod that
// mounts its service account token.
func kubeAPIAccess() *v1.Volume {
	return &v1.Volume{Name: "kube-api-access-x7k2p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
		DefaultMode: ptr[int32](0o644),
		Sources: []v1.VolumeProjection{
			{ServiceAccountToken: &v1.ServiceAccountTokenProjection{ExpirationSeconds: ptr[int64](3607), Path: "token"}},
			{ConfigMap: &v1.ConfigMapProjection{
				LocalObjectReference: v1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []v1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}},
			}}},
		},
	}}}
}

// clock is a settable time for token freshness.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func projectedSource(t *testing.T, objs ...*v1.ConfigMap) (*Source, *tokenIssuer, *clock) {
	t.Helper()
	clk := &clock{t: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	cs := fake.NewClientset()
	for _, o := range objs {
		if err := cs.Tracker().Add(o); err != nil {
			t.Fatal(err)
		}
	}
	ti := &tokenIssuer{now: clk.now}
	ti.install(cs)
	s := startSource(t, cs, nil)
	s.now = clk.now
	return s, ti, clk
}

func TestProjectedKubeAPIAccess(t *testing.T) {
	ctx := context.Background()
	pod := testPod()
	s, ti, clk := projectedSource(t, configMap("shop", "kube-root-ca.crt", map[string]string{"ca.crt": "-----BEGIN CERTIFICATE-----"}, nil))
	dir := volumeDir(t)
	vol := kubeAPIAccess()
	if err := s.SetUp(ctx, pod, vol, dir); err != nil {
		t.Fatal(err)
	}
	if !onTmpfs(t, dir) {
		t.Fatal("projected volume is not on a tmpfs")
	}
	got := readVolume(t, dir)
	if len(got) != 3 || string(got["ca.crt"].data) != "-----BEGIN CERTIFICATE-----" || string(got["namespace"].data) != "shop" {
		t.Fatalf("volume holds %v", got)
	}
	for p, f := range got {
		if f.mode != 0o644 {
			t.Fatalf("%s mode %o, want 644", p, f.mode)
		}
	}
	if ti.count() != 1 {
		t.Fatalf("%d token requests, want 1", ti.count())
	}
	req := ti.requests[0]
	if string(got["token"].data) != fakeJWT(clk.now(), clk.now().Add(3607*time.Second), 1) {
		t.Fatalf("token file %q is not the issued token", got["token"].data)
	}
	ref := req.Spec.BoundObjectRef
	if ti.names[0] != "builder" || ref == nil || ref.Kind != "Pod" || ref.APIVersion != "v1" || ref.Name != "web-1" || ref.UID != pod.UID ||
		*req.Spec.ExpirationSeconds != 3607 || len(req.Spec.Audiences) != 0 {
		t.Fatalf("token request for %q: %+v", ti.names[0], req.Spec)
	}

	// A fresh token is kept: the volume is not rewritten.
	first := dataTarget(t, dir)
	clk.add(30 * time.Minute)
	if err := s.SetUp(ctx, pod, vol, dir); err != nil {
		t.Fatal(err)
	}
	if ti.count() != 1 || dataTarget(t, dir) != first {
		t.Fatalf("fresh token: %d requests, ..data %s (was %s)", ti.count(), dataTarget(t, dir), first)
	}
	// Past 80% of its lifetime it is replaced.
	clk.add(20 * time.Minute)
	if err := s.SetUp(ctx, pod, vol, dir); err != nil {
		t.Fatal(err)
	}
	if ti.count() != 2 {
		t.Fatalf("stale token: %d requests, want 2", ti.count())
	}
	if tok := contents(t, dir)["token"]; tok != fakeJWT(clk.now(), clk.now().Add(3607*time.Second), 2) {
		t.Fatalf("token after refresh %q", tok)
	}
	if dirs := hiddenDirs(t, dir); len(dirs) != 1 || dirs[0] == first {
		t.Fatalf("data directories after refresh: %v", dirs)
	}
}

func TestProjectedSources(t *testing.T) {
	ctx := context.Background()
	pod := testPod()
	pod.Spec.ServiceAccountName = ""
	s, ti, _ := projectedSource(t, configMap("shop", "cfg", map[string]string{"a": "1"}, nil))
	if err := s.client.(*fake.Clientset).Tracker().Add(&v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "sec"}, Data: map[string][]byte{"k": []byte("v")},
	}); err != nil {
		t.Fatal(err)
	}
	dir := volumeDir(t)
	vol := &v1.Volume{Name: "all", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
		{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}},
		{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "sec"}, Items: []v1.KeyToPath{{Key: "k", Path: "s/k", Mode: ptr[int32](0o400)}}}},
		{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}, Optional: ptr(true)}},
		{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Audience: "vault", Path: "vault-token"}},
	}}}}
	if err := s.SetUp(ctx, pod, vol, dir); err != nil {
		t.Fatal(err)
	}
	got := readVolume(t, dir)
	if len(got) != 3 || string(got["a"].data) != "1" || string(got["s/k"].data) != "v" || got["s/k"].mode != 0o400 || got["vault-token"].mode != 0o644 {
		t.Fatalf("volume holds %v", got)
	}
	// No name means the namespace's default service account; unset
	// expirationSeconds means the API server's default hour.
	req := ti.requests[0]
	if ti.names[0] != "default" || len(req.Spec.Audiences) != 1 || req.Spec.Audiences[0] != "vault" || *req.Spec.ExpirationSeconds != 3600 {
		t.Fatalf("token request for %q: %+v", ti.names[0], req.Spec)
	}
}

func TestProjectedErrors(t *testing.T) {
	ctx := context.Background()
	pod := testPod()
	f := func(sources []v1.VolumeProjection, fail error, class error, mention string) {
		t.Helper()
		s, ti, _ := projectedSource(t, configMap("shop", "cfg", map[string]string{"a": "1"}, nil))
		ti.fail = fail
		dir := volumeDir(t)
		vol := &v1.Volume{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: sources}}}
		wantErr(t, s.SetUp(ctx, pod, vol, dir), class, mention)
		if dirs := hiddenDirs(t, dir); len(dirs) != 0 {
			t.Fatalf("a failed setup wrote %v", dirs)
		}
	}
	cfg := v1.VolumeProjection{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}}
	f([]v1.VolumeProjection{cfg, {ClusterTrustBundle: &v1.ClusterTrustBundleProjection{Path: "bundle.pem"}}}, nil,
		ErrUnsupported, "clusterTrustBundle")
	f([]v1.VolumeProjection{cfg, {DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{
		{Path: "a", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}},
	}}}}, nil, ErrInvalid, `two files at path "a"`)
	f([]v1.VolumeProjection{{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "gone"}}}}, nil,
		ErrNotFound, `configmap "gone" not found`)
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts/token"}, "builder", errors.New("node may not"))
	tok := v1.VolumeProjection{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}}
	f([]v1.VolumeProjection{tok}, forbidden, forbidden, `token for service account "builder" in namespace "shop"`)
	f([]v1.VolumeProjection{{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "../token"}}}, nil, ErrInvalid, "../token")
}

func TestTokenFresh(t *testing.T) {
	iat := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := func(token string, age time.Duration, want bool) {
		t.Helper()
		if got := tokenFresh([]byte(token), iat.Add(age)); got != want {
			t.Fatalf("token %q at age %v: fresh=%v, want %v", token, age, got, want)
		}
	}
	hour := fakeJWT(iat, iat.Add(time.Hour), 1)
	f(hour, 0, true)
	f(hour, 47*time.Minute, true)
	f(hour, 48*time.Minute, false)
	// A year-long token is still replaced daily.
	year := fakeJWT(iat, iat.Add(365*24*time.Hour), 1)
	f(year, 23*time.Hour, true)
	f(year, 24*time.Hour, false)
	f("not-a-jwt", 0, false)
	f("a.!!!.c", 0, false)
	f(fakeJWT(iat, iat, 1), 0, false)
}

func TestProjectedIgnoresForeignTokenFile(t *testing.T) {
	// Whatever sits at the token path outside "..data" is never reused.
	ctx := context.Background()
	s, ti, clk := projectedSource(t)
	dir := volumeDir(t)
	if err := ensureTmpfs(dir); err != nil {
		t.Fatal(err)
	}
	planted := fakeJWT(clk.now(), clk.now().Add(time.Hour), 99)
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte(planted), 0o644); err != nil {
		t.Fatal(err)
	}
	vol := &v1.Volume{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
		{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}},
	}}}}
	if err := s.SetUp(ctx, testPod(), vol, dir); err != nil {
		t.Fatal(err)
	}
	if ti.count() != 1 {
		t.Fatalf("%d token requests, want 1", ti.count())
	}
	if tok := contents(t, dir)["token"]; tok != fakeJWT(clk.now(), clk.now().Add(time.Hour), 1) {
		t.Fatalf("token %q, want the issued one", tok)
	}
}
