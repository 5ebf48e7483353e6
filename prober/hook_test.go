package prober

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func execHookOf(cmd ...string) *v1.LifecycleHandler {
	return &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: cmd}}
}

func TestExecHook(t *testing.T) {
	var gotTimeout time.Duration = -1
	var gotID string
	ok := execFunc(func(_ context.Context, id string, _ []string, timeout time.Duration) (*runtimeapi.ExecSyncResponse, error) {
		gotID, gotTimeout = id, timeout
		return &runtimeapi.ExecSyncResponse{Stdout: []byte("done\n")}, nil
	})
	res := RunHook(context.Background(), ok, execHookOf("sh", "-c", "echo done"), &v1.Container{Name: "app"}, "c1", "")
	if res.Err != nil || res.Output != "done\n" {
		t.Fatalf("exit 0: %+v", res)
	}
	if gotID != "c1" || gotTimeout != 0 {
		t.Errorf("ran in %q with timeout %v; want c1 and none (a hook has no timeout)", gotID, gotTimeout)
	}

	fail := answer(&runtimeapi.ExecSyncResponse{ExitCode: 3, Stdout: []byte("out "), Stderr: []byte("err")}, nil)
	res = RunHook(context.Background(), fail, execHookOf("sh", "-c", "exit 3"), &v1.Container{Name: "app"}, "c1", "")
	if res.Err == nil || res.Err.Error() != "command 'sh -c exit 3' exited with 3: err" || res.Output != "out err" {
		t.Fatalf("exit 3: %+v", res)
	}

	gone := errors.New("container not found")
	res = RunHook(context.Background(), answer(nil, gone), execHookOf("true"), &v1.Container{Name: "app"}, "c1", "")
	if !errors.Is(res.Err, gone) {
		t.Fatalf("runtime error: %+v", res)
	}
	if res := RunHook(context.Background(), nil, execHookOf("true"), &v1.Container{Name: "app"}, "c1", ""); res.Err == nil {
		t.Fatal("no runtime: the hook succeeded")
	}
}

// httpHookTo runs an httpGet hook against s, the pod IP being the
// server's.
func httpHookTo(t *testing.T, s *httptest.Server, path string) HookResult {
	t.Helper()
	ip, port := serverAddr(t, s)
	h := &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: path, Port: intstr.FromString("web")}}
	c := &v1.Container{Name: "app", Ports: []v1.ContainerPort{{Name: "web", ContainerPort: int32(port)}}}
	return RunHook(context.Background(), nil, h, c, "c1", ip)
}

func TestHTTPHookStatusDoesNotMatter(t *testing.T) {
	var ua string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua = r.Header.Get("User-Agent")
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer s.Close()
	if res := httpHookTo(t, s, "/ok"); res.Err != nil {
		t.Fatalf("200: %+v", res)
	}
	if ua != "kube-lifecycle/1.36" {
		t.Errorf("User-Agent %q", ua)
	}
	// The kubelet sends the request and looks no further: an answer is
	// a success, whatever its status.
	if res := httpHookTo(t, s, "/fail"); res.Err != nil {
		t.Fatalf("500: %+v, want a success as the kubelet has it", res)
	}
}

func TestHTTPHookRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	h := &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/hook", Port: intstr.FromInt(port)}}
	res := RunHook(context.Background(), nil, h, &v1.Container{Name: "app"}, "c1", "127.0.0.1")
	if res.Err == nil || !strings.Contains(res.Err.Error(), "connection refused") {
		t.Fatalf("refused: %+v", res)
	}
	h.HTTPGet.Port = intstr.FromString("nope")
	if res := RunHook(context.Background(), nil, h, &v1.Container{Name: "app"}, "c1", "127.0.0.1"); res.Err == nil {
		t.Fatal("unknown port name: the hook succeeded")
	}
	h.HTTPGet.Port = intstr.FromInt(port)
	if res := RunHook(context.Background(), nil, h, &v1.Container{Name: "app"}, "c1", ""); !errors.Is(res.Err, errNoPodIP) {
		t.Fatalf("no pod IP: %+v", res)
	}
}

// An HTTPS hook answered in plain HTTP is sent again over HTTP, without
// its credentials, and says so for the warning.
func TestHTTPHookFallsBackToHTTP(t *testing.T) {
	var auth []string
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = append(auth, r.Header.Get("Authorization"))
	}))
	defer s.Close()
	ip, port := serverAddr(t, s)
	h := &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/hook", Port: intstr.FromInt(port), Scheme: v1.URISchemeHTTPS,
		HTTPHeaders: []v1.HTTPHeader{{Name: "Authorization", Value: "Bearer x"}}}}
	res := RunHook(context.Background(), nil, h, &v1.Container{Name: "app"}, "c1", ip)
	if res.Err != nil || res.Fallback != s.Listener.Addr().String() {
		t.Fatalf("%+v, want a success with the fallback to %s", res, s.Listener.Addr())
	}
	if len(auth) != 1 || auth[0] != "" {
		t.Errorf("Authorization sent over HTTP: %q", auth)
	}
}

func TestSleepHook(t *testing.T) {
	h := &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 1}}
	start := time.Now()
	if res := RunHook(context.Background(), nil, h, &v1.Container{Name: "app"}, "c1", ""); res.Err != nil {
		t.Fatal(res.Err)
	}
	if took := time.Since(start); took < time.Second {
		t.Fatalf("slept %v, want 1s", took)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	h.Sleep.Seconds = 60
	start = time.Now()
	res := RunHook(ctx, nil, h, &v1.Container{Name: "app"}, "c1", "")
	if res.Err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("a sleep cut by its context: %+v after %v", res, time.Since(start))
	}
	h.Sleep.Seconds = 0
	if res := RunHook(context.Background(), nil, h, &v1.Container{Name: "app"}, "c1", ""); res.Err != nil {
		t.Fatalf("sleep 0: %v", res.Err)
	}
}

func TestHookMessage(t *testing.T) {
	const pod = "web_default(uid-1)"
	err := errors.New("boom")
	for _, c := range []struct {
		h    *v1.LifecycleHandler
		res  HookResult
		want string
	}{
		{execHookOf("sh", "-c", "exit 3"), HookResult{Err: err, Output: "out\n"},
			`Exec lifecycle hook ([sh -c exit 3]) for Container "app" in Pod "web_default(uid-1)" failed - error: boom, message: "out\n"`},
		{&v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/hook"}}, HookResult{Err: err},
			`HTTP lifecycle hook (/hook) for Container "app" in Pod "web_default(uid-1)" failed - error: boom`},
		{&v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 5}}, HookResult{Err: err},
			`Sleep lifecycle hook (5) for Container "app" in Pod "web_default(uid-1)" failed - error: boom`},
		{&v1.LifecycleHandler{}, HookResult{Err: errInvalidHook},
			"Cannot run handler: " + errInvalidHook.Error()},
	} {
		if got := c.res.Message(c.h, "app", pod); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

func TestHookPanicIsAnError(t *testing.T) {
	boom := execFunc(func(context.Context, string, []string, time.Duration) (*runtimeapi.ExecSyncResponse, error) {
		panic("boom")
	})
	if res := RunHook(context.Background(), boom, execHookOf("x"), &v1.Container{Name: "app"}, "c1", ""); res.Err == nil {
		t.Fatal("a panicking hook succeeded")
	}
}
