package volumes

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	authv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func testPod() *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "web-1",
			Namespace:   "shop",
			UID:         "0b4c2d1e-uid",
			Labels:      map[string]string{"app": "web", "tier": "front"},
			Annotations: map[string]string{"note": "say \"hi\"\n"},
		},
		Spec: v1.PodSpec{
			ServiceAccountName: "builder",
			Containers: []v1.Container{{
				Name: "app",
			}},
		},
	}
}

// volumeDir is a fresh volume directory; a tmpfs a test mounts on it is
// unmounted before the temporary directory is removed.
func volumeDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("these tests mount tmpfs and chown files: run them as root")
	}
	dir := filepath.Join(t.TempDir(), "vol")
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for {
			if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
				return
			}
		}
	})
	return dir
}

// readVolume returns what a container sees: every file reachable from
// the visible (non "..") names, by path, with its mode.
func readVolume(t *testing.T, dir string) map[string]file {
	t.Helper()
	out := map[string]file{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(rel string)
	walk = func(rel string) {
		p := filepath.Join(dir, rel)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if fi.IsDir() {
			sub, err := os.ReadDir(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range sub {
				walk(rel + "/" + e.Name())
			}
			return
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[rel] = file{data: data, mode: fi.Mode().Perm()}
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "..") {
			walk(e.Name())
		}
	}
	return out
}

// contents flattens readVolume to path → text.
func contents(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for p, f := range readVolume(t, dir) {
		out[p] = string(f.data)
	}
	return out
}

func dataTarget(t *testing.T, dir string) string {
	t.Helper()
	target, err := os.Readlink(filepath.Join(dir, dataLink))
	if err != nil {
		t.Fatal(err)
	}
	return target
}

// hiddenDirs lists the timestamped data directories in dir.
func hiddenDirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "..") {
			out = append(out, e.Name())
		}
	}
	return out
}

// fakeJWT is a token with the claims tokenFresh reads; the signature is
// not checked by anyone here.
func fakeJWT(iat, exp time.Time, n int) string {
	enc := base64.RawURLEncoding
	claims := fmt.Sprintf(`{"iat":%d,"exp":%d,"jti":"%d"}`, iat.Unix(), exp.Unix(), n)
	return enc.EncodeToString([]byte(`{"alg":"RS256"}`)) + "." + enc.EncodeToString([]byte(claims)) + ".sig"
}

// tokenIssuer answers TokenRequests on a fake clientset, as the API
// server would: a fresh token per request, valid for the requested time.
type tokenIssuer struct {
	mu       sync.Mutex
	now      func() time.Time
	requests []*authv1.TokenRequest
	names    []string // service account per request
	fail     error
}

func (ti *tokenIssuer) install(cs *fake.Clientset) {
	cs.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		ca, ok := a.(k8stesting.CreateActionImpl)
		if !ok || a.GetSubresource() != "token" {
			return false, nil, nil
		}
		ti.mu.Lock()
		defer ti.mu.Unlock()
		if ti.fail != nil {
			return true, nil, ti.fail
		}
		req := ca.GetObject().(*authv1.TokenRequest).DeepCopy()
		ti.requests = append(ti.requests, req)
		ti.names = append(ti.names, ca.Name)
		now := ti.now()
		req.Status.Token = fakeJWT(now, now.Add(time.Duration(*req.Spec.ExpirationSeconds)*time.Second), len(ti.requests))
		return true, req, nil
	})
}

func (ti *tokenIssuer) count() int {
	ti.mu.Lock()
	defer ti.mu.Unlock()
	return len(ti.requests)
}

func wantErr(t *testing.T, err, class error, substr string) {
	t.Helper()
	if !errors.Is(err, class) {
		t.Fatalf("error %v, want class %v", err, class)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Fatalf("error %q does not mention %q", err, substr)
	}
}

func modeOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}

// startSource is New with Run going until the end of the test, so the
// watches it opens close with it.
func startSource(t *testing.T, client kubernetes.Interface, allocatable v1.ResourceList) *Source {
	t.Helper()
	s := New(client, allocatable)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s
}

// apiReads counts the requests that read objects: get, list and watch.
func apiReads(cs *fake.Clientset) int {
	n := 0
	for _, a := range cs.Actions() {
		switch a.GetVerb() {
		case "get", "list", "watch":
			n++
		}
	}
	return n
}

// waitWatches waits until n watches of resource were opened: a fake
// clientset delivers no event to a watch not yet open.
func waitWatches(t *testing.T, cs *fake.Clientset, resource string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := 0
		for _, a := range cs.Actions() {
			if a.GetVerb() == "watch" && a.GetResource().Resource == resource {
				got++
			}
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d watches of %s opened, want %d", got, resource, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// staleLog collects the pods a source asks passes for.
type staleLog struct {
	mu   sync.Mutex
	uids []types.UID
}

func (l *staleLog) add(uid types.UID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.uids = append(l.uids, uid)
}

// wait returns the pods asked for once there are n of them.
func (l *staleLog) wait(t *testing.T, n int) []types.UID {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		l.mu.Lock()
		got := append([]types.UID(nil), l.uids...)
		l.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d passes asked for, want %d: %v", len(got), n, got)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (l *staleLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.uids)
}
