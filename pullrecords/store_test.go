package pullrecords

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	kubeletv1alpha1 "k8s.io/kubelet/config/v1alpha1"

	"github.com/podline/podline/credentials"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openStore(t testing.TB, dir, policy string) *Store {
	t.Helper()
	p, err := NewPolicy(policy, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir, p, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ref(t testing.TB, image string) credentials.Reference {
	t.Helper()
	r, err := credentials.ParseReference(image)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// cred is user:password from secret ns/name with uid.
func cred(ns, name, uid, password string) credentials.Credential {
	return credentials.Credential{Username: "user", Password: password, Secret: ns + "/" + name, SecretUID: uid}
}

// named is image imageRef as the runtime reports it when a pod names it
// r: under r's tag or digest.
func named(r credentials.Reference, imageRef string) *runtimeapi.Image {
	if r.Digest != "" {
		return &runtimeapi.Image{Id: imageRef, RepoDigests: []string{r.String()}}
	}
	return &runtimeapi.Image{Id: imageRef, RepoTags: []string{r.String()}}
}

// verdict is the store's answer for a pod presenting creds that names
// image imageRef r.
func verdict(s *Store, r credentials.Reference, imageRef string, pull v1.PullPolicy, creds ...credentials.Credential) Verdict {
	return s.Check(r, named(r, imageRef), pull, func() []kubeletv1alpha1.ImagePullSecret { return SecretsOf(creds) }).Verdict
}

func pull(t testing.TB, s *Store, r credentials.Reference, imageRef string, used *credentials.Credential) {
	t.Helper()
	if err := s.PullStarted(r); err != nil {
		t.Fatal(err)
	}
	s.PullSucceeded(r, imageRef, used)
}

const (
	privateID = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
	publicID  = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	localID   = "sha256:3333333333333333333333333333333333333333333333333333333333333333"
)

// What one run of podline learned about who pulled which image answers
// the same after a restart: a second Open of the directory.
func TestRecordsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	private, public, local := ref(t, "r.io/private:1"), ref(t, "r.io/public:1"), ref(t, "busybox:1.36")
	inA := cred("a", "pull", "uid-a", "right")
	wrongInB, rightInB := cred("b", "wrong", "uid-bw", "wrong"), cred("b", "pull", "uid-b", "right")

	want := func(s *Store, when string) {
		t.Helper()
		for _, c := range []struct {
			name  string
			r     credentials.Reference
			id    string
			pull  v1.PullPolicy
			creds []credentials.Credential
			want  Verdict
		}{
			{"private, the secret it was pulled with", private, privateID, v1.PullIfNotPresent, []credentials.Credential{inA}, Use},
			{"private, no secret", private, privateID, v1.PullIfNotPresent, nil, Verify},
			{"private, no secret, Never", private, privateID, v1.PullNever, nil, Refuse},
			{"private, a wrong secret", private, privateID, v1.PullIfNotPresent, []credentials.Credential{wrongInB}, Verify},
			{"private, the same credential in another namespace", private, privateID, v1.PullIfNotPresent, []credentials.Credential{rightInB}, Use},
			{"public, pulled anonymously", public, publicID, v1.PullNever, nil, Use},
			{"preloaded", local, localID, v1.PullNever, nil, Use},
		} {
			if got := verdict(s, c.r, c.id, c.pull, c.creds...); got != c.want {
				t.Errorf("%s: %s: %s, want %s", when, c.name, got, c.want)
			}
		}
	}
	s := openStore(t, dir, "")
	pull(t, s, private, privateID, &inA)
	pull(t, s, public, publicID, nil)
	want(s, "first run")

	again := openStore(t, dir, "")
	want(again, "after a restart")
	// The second namespace's secret matched by its hash and was learned:
	// it is on disk with its own coordinates.
	b, err := os.ReadFile(filepath.Join(dir, pulledDir, fileName(privateID)))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"kind":"ImagePulledRecord"`, `"apiVersion":"kubelet.config.k8s.io/v1alpha1"`,
		`"imageRef":"` + privateID + `"`, `"r.io/private":{"kubernetesSecrets":[`, `"namespace":"a","name":"pull"`, `"namespace":"b","name":"pull"`,
		`"credentialHash":"` + inA.Hash() + `"`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("record file lacks %s:\n%s", s, b)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, pullingDir)); len(entries) != 0 {
		t.Errorf("intents left after pulls that ended: %v", entries)
	}
}

// A record the kubelet wrote reads as the kubelet means it.
func TestReadsTheKubeletsFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, pulledDir), 0o700); err != nil {
		t.Fatal(err)
	}
	kubelet := `{"kind":"ImagePulledRecord","apiVersion":"kubelet.config.k8s.io/v1alpha1","lastUpdatedTime":"2025-06-01T10:00:00Z","imageRef":"` + privateID + `","credentialMapping":{"docker.io/testing/test":{"kubernetesSecrets":[{"uid":"testsecretuid","namespace":"default","name":"pull-secret","credentialHash":"testsecrethash"}]}}}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, pulledDir, fileName(privateID)), []byte(kubelet), 0o600); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir, "")
	r := ref(t, "docker.io/testing/test:latest")
	secretFor := func(ns, name, uid, hash string) func() []kubeletv1alpha1.ImagePullSecret {
		return func() []kubeletv1alpha1.ImagePullSecret {
			return []kubeletv1alpha1.ImagePullSecret{secret(ns, name, uid, hash)}
		}
	}
	if d := s.Check(r, named(r, privateID), v1.PullIfNotPresent, secretFor("default", "pull-secret", "testsecretuid", "testsecrethash")); d.Verdict != Use {
		t.Errorf("the recorded secret: %s, want use", d.Verdict)
	}
	if d := s.Check(r, named(r, privateID), v1.PullIfNotPresent, secretFor("other", "x", "u", "h")); d.Verdict != Verify {
		t.Errorf("another secret: %s, want verify", d.Verdict)
	}
	// What podline writes decodes as what was read.
	again, err := decodeRecord(encodeRecord(s.records[privateID]))
	if err != nil || again.CredentialMapping["docker.io/testing/test"].KubernetesSecrets[0].CredentialHash != "testsecrethash" {
		t.Errorf("round trip: %+v, %v", again, err)
	}
}

// Checks answer from memory: with the files gone after Open, a check
// still finds the records.
func TestChecksReadNoFiles(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, "")
	inA := cred("a", "pull", "uid-a", "right")
	pull(t, s, ref(t, "r.io/private:1"), privateID, &inA)
	again := openStore(t, dir, "")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if got := verdict(again, ref(t, "r.io/private:1"), privateID, v1.PullIfNotPresent, inA); got != Use {
		t.Errorf("with its files removed: %s, want use", got)
	}
	if got := verdict(again, ref(t, "r.io/private:1"), privateID, v1.PullIfNotPresent); got != Verify {
		t.Errorf("no secret, files removed: %s, want verify", got)
	}
}

type listedImages []*runtimeapi.Image

func (l listedImages) ListImages(context.Context, *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error) {
	return l, nil
}

type failingLister struct{}

func (failingLister) ListImages(context.Context, *runtimeapi.ImageFilter) ([]*runtimeapi.Image, error) {
	return nil, errors.New("runtime unavailable")
}

// An intent left by a podline that died during the pull: the image is not
// preloaded, whichever tag or digest of its repository a pod names it by.
// Once settled against the runtime's images, it is an image pulled with no
// credentials anyone may use; the intent of an image that never arrived
// stays until a pull of it ends. Only then is another image of the
// repository, with no record, preloaded again.
func TestIntentLeftByACrashMidPull(t *testing.T) {
	dir := t.TempDir()
	private, absent := ref(t, "r.io/private:1"), ref(t, "r.io/never:1")
	digest := "r.io/private@sha256:" + strings.Repeat("a", 64)
	crashed := openStore(t, dir, "")
	for _, r := range []credentials.Reference{private, absent} {
		if err := crashed.PullStarted(r); err != nil {
			t.Fatal(err)
		}
	}
	// podline dies here; the runtime finished the first pull.

	s := openStore(t, dir, "")
	// The runtime cannot list its images at start: nothing is settled.
	if err := s.ResolveIntents(context.Background(), failingLister{}); err == nil {
		t.Fatal("ResolveIntents with a runtime that cannot list: no error")
	}
	for _, name := range []string{"r.io/private:1", "r.io/private:latest", digest} {
		if got := verdict(s, ref(t, name), privateID, v1.PullIfNotPresent); got != Verify {
			t.Errorf("image of an unfinished pull named %s, before settling: %s, want verify (not preloaded)", name, got)
		}
	}
	if got := verdict(s, ref(t, "r.io/private:2"), localID, v1.PullNever); got != Refuse {
		t.Errorf("another image of the repository, before settling: %s, want refuse (not preloaded)", got)
	}
	runtimeHas := listedImages{{Id: privateID, RepoTags: []string{"r.io/private:1"}, RepoDigests: []string{digest}}}
	if err := s.ResolveIntents(context.Background(), runtimeHas); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"r.io/private:1", "r.io/private:latest", digest} {
		if got := verdict(s, ref(t, name), privateID, v1.PullIfNotPresent, cred("a", "pull", "uid-a", "right")); got != Verify {
			t.Errorf("settled, named %s: %s, want verify", name, got)
		}
	}
	if got := verdict(s, ref(t, "r.io/private:2"), localID, v1.PullNever); got != Use {
		t.Errorf("another image of the repository, with no record, once settled: %s, want use (preloaded)", got)
	}
	files := func() []string {
		entries, _ := os.ReadDir(filepath.Join(dir, pullingDir))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}
	if got := files(); len(got) != 1 || got[0] != fileName(absent.String()) {
		t.Errorf("intents after settling: %v, want only %s's", got, absent)
	}
	// It stays across another restart, and means the image is not
	// preloaded should it appear.
	s = openStore(t, dir, "")
	if got := verdict(s, absent, publicID, v1.PullIfNotPresent); got != Verify {
		t.Errorf("image of a leftover intent: %s, want verify", got)
	}
	if got := verdict(s, private, privateID, v1.PullIfNotPresent); got != Verify {
		t.Errorf("settled image after a restart: %s, want verify", got)
	}
	if got := verdict(s, ref(t, "r.io/never:2"), localID, v1.PullNever); got != Refuse {
		t.Errorf("another tag of a leftover intent's repository: %s, want refuse (not preloaded)", got)
	}
	// A pull of it ends the intent.
	pull(t, s, absent, publicID, nil)
	if got := files(); len(got) != 0 {
		t.Errorf("intents after the pull ended: %v", got)
	}
	if got := verdict(s, absent, publicID, v1.PullNever); got != Use {
		t.Errorf("after an anonymous pull: %s, want use", got)
	}
	if got := verdict(s, ref(t, "r.io/never:2"), localID, v1.PullNever); got != Use {
		t.Errorf("another image of the repository, with no record, after the pull: %s, want use (preloaded)", got)
	}
}

// While a pull of a repository runs, no image of it counts as preloaded,
// whatever tag or digest names it.
func TestPullUnderWayIsNotPreloading(t *testing.T) {
	s := openStore(t, t.TempDir(), "")
	if err := s.PullStarted(ref(t, "r.io/private:1")); err != nil {
		t.Fatal(err)
	}
	byDigest := ref(t, "r.io/private@sha256:"+strings.Repeat("b", 64))
	if got := verdict(s, byDigest, privateID, v1.PullIfNotPresent); got != Verify {
		t.Errorf("during the pull: %s, want verify", got)
	}
	s.PullFailed(ref(t, "r.io/private:1"), "")
	if got := verdict(s, byDigest, privateID, v1.PullIfNotPresent); got != Use {
		t.Errorf("after the failed pull: %s, want use (preloaded)", got)
	}
}

// A pull that failed or was cancelled after the runtime stored the image
// leaves an image the node agent pulled, not a preloaded one: every pod
// verifies it, after a restart too. A pull whose outcome the runtime
// could not tell leaves its intent, as a crash would, until the next pull
// of the image ends.
func TestFailedPullThatLeftTheImage(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, "")
	private := ref(t, "r.io/private:1")
	if err := s.PullStarted(private); err != nil {
		t.Fatal(err)
	}
	s.PullFailed(private, privateID)
	for _, st := range []*Store{s, openStore(t, dir, "")} {
		if got := verdict(st, private, privateID, v1.PullNever); got != Refuse {
			t.Errorf("image a cancelled pull left: %s, want refuse (verify, pull policy Never)", got)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, pullingDir)); len(entries) != 0 {
		t.Errorf("intents left after the failed pull: %v", entries)
	}

	other := ref(t, "r.io/other:1")
	if err := s.PullStarted(other); err != nil {
		t.Fatal(err)
	}
	s.PullUncertain(other)
	if got := verdict(s, ref(t, "r.io/other:2"), localID, v1.PullNever); got != Refuse {
		t.Errorf("repository of a pull that may have left its image: %s, want refuse (not preloaded)", got)
	}
	again := openStore(t, dir, "")
	if got := verdict(again, ref(t, "r.io/other:2"), localID, v1.PullNever); got != Refuse {
		t.Errorf("after a restart: %s, want refuse (not preloaded)", got)
	}
	pull(t, s, other, publicID, nil)
	if got := verdict(s, ref(t, "r.io/other:2"), localID, v1.PullNever); got != Use {
		t.Errorf("after the next pull of the image ended: %s, want use (preloaded)", got)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, pullingDir)); len(entries) != 0 {
		t.Errorf("intents left after the next pull ended: %v", entries)
	}
}

// A pod that names an image by its ID (the runtime resolves it; the name
// parses as the repository docker.io/library/sha256) gets no exemption
// from the policy: not as preloaded, nor by an allowlist entry that the
// name matches and the image's own repository does not. NeverVerify
// exempts every image whatever its name.
func TestImageNamedByItsID(t *testing.T) {
	preloaded := &runtimeapi.Image{Id: localID, RepoTags: []string{"r.io/local:1"}, RepoDigests: []string{"r.io/local@sha256:" + strings.Repeat("c", 64)}}
	private := &runtimeapi.Image{Id: privateID, RepoTags: []string{"r.io/private:1"}}
	inA := cred("a", "pull", "uid-a", "right")
	check := func(s *Store, name string, img *runtimeapi.Image) Verdict {
		return s.Check(ref(t, name), img, v1.PullNever, func() []kubeletv1alpha1.ImagePullSecret { return nil }).Verdict
	}
	for _, tc := range []struct {
		policy    string
		allowlist []string
		// byName: the preloaded image named by its tag or its digest.
		byID, byName Verdict
	}{
		{NeverVerifyPreloadedImages, nil, Refuse, Use},
		{NeverVerifyAllowlistedImages, []string{"docker.io/library/*"}, Refuse, Refuse},
		{NeverVerifyAllowlistedImages, []string{"docker.io/library/sha256", "r.io/*"}, Refuse, Use},
		{NeverVerify, nil, Use, Use},
	} {
		p, err := NewPolicy(tc.policy, tc.allowlist)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Open(t.TempDir(), p, quiet)
		if err != nil {
			t.Fatal(err)
		}
		pull(t, s, ref(t, "r.io/private:1"), privateID, &inA)
		policy := tc.policy + " " + strings.Join(tc.allowlist, ",")
		if got := check(s, privateID, private); got != tc.byID {
			t.Errorf("%s: private image named by its ID: %s, want %s", policy, got, tc.byID)
		}
		if got := check(s, localID, preloaded); got != tc.byID {
			t.Errorf("%s: preloaded image named by its ID: %s, want %s", policy, got, tc.byID)
		}
		for _, name := range append(preloaded.RepoTags, preloaded.RepoDigests...) {
			if got := check(s, name, preloaded); got != tc.byName {
				t.Errorf("%s: preloaded image named %s: %s, want %s", policy, name, got, tc.byName)
			}
		}
	}
}

// A torn or foreign record file neither stops podline nor exempts its
// image: the image is verified, and the next pull writes the record
// again. Temporary files of writes cut short are removed.
func TestBadFilesFailSafe(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, "")
	inA := cred("a", "pull", "uid-a", "right")
	r := ref(t, "r.io/private:1")
	pull(t, s, r, privateID, &inA)
	path := filepath.Join(dir, pulledDir, fileName(privateID))
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, whole[:len(whole)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	tmp := path + ".123456" + tmpSuffix
	if err := os.WriteFile(tmp, whole[:10], 0o600); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, NeverVerify)
	if d := s.Check(r, named(r, privateID), v1.PullIfNotPresent, nil); d.Verdict != Verify || d.Result != ResultError {
		t.Errorf("torn record, even under NeverVerify: %s (%s), want verify (error)", d.Verdict, d.Result)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("temporary file left: %v", err)
	}
	pull(t, s, r, privateID, &inA)
	if got := verdict(s, r, privateID, v1.PullIfNotPresent); got != Use {
		t.Errorf("after the record was written again, NeverVerify: %s, want use", got)
	}
	if _, err := decodeRecord(mustRead(t, path)); err != nil {
		t.Errorf("rewritten record: %v", err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
