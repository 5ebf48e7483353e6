//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/tools/remotecommand"
	clientspdy "k8s.io/client-go/transport/spdy"
	utilexec "k8s.io/client-go/util/exec"
)

// Every stream protocol a kubelet takes, driven by client-go's own
// executors and dialers: straight to the node's port 10250, and through
// the API server, which proxies WebSocket streams to nodes that declare
// ExtendWebSocketsToKubelet as they come. containerd's streaming server,
// behind podline, speaks SPDY and WebSocket up to v4: v5 exec and attach
// and the tunneled port-forward are podline's to carry.

// streamPods runs the pods the stream tests need: box (an idle shell),
// reader (its main process echoes its stdin, for attach) and web (httpd
// on 8080).
func streamPods(n *servingNode) {
	n.runningPod(n.apiPod("box", "sleep 3600"))
	reader := n.apiPod("reader", `while read l; do echo "got $l"; done`)
	reader.Spec.Containers[0].Stdin = true
	n.runningPod(reader)
	n.runningPod(n.apiPod("web", `mkdir -p /www && echo "served by $(hostname)" > /www/index.html && exec httpd -f -p 8080 -h /www`))
}

// streamPaths are where a pod's sessions are asked for: the node's own
// paths, or the API server's pod subresources.
type streamPaths struct {
	cfg                     *rest.Config
	exec, attach, forwardTo func(pod string) string
}

func nodePaths(t *testing.T, n *servingNode) streamPaths {
	cfg := &rest.Config{
		Host:            fmt.Sprintf("https://%s:%d", n.ip, n.port),
		BearerToken:     n.serviceAccountToken("streamer", "proxy"),
		TLSClientConfig: rest.TLSClientConfig{CAFile: n.ca},
	}
	base := cfg.Host
	return streamPaths{
		cfg:       cfg,
		exec:      func(pod string) string { return fmt.Sprintf("%s/exec/%s/%s/app?", base, n.name, pod) },
		attach:    func(pod string) string { return fmt.Sprintf("%s/attach/%s/%s/app?", base, n.name, pod) },
		forwardTo: func(pod string) string { return fmt.Sprintf("%s/portForward/%s/%s", base, n.name, pod) },
	}
}

func apiServerPaths(t *testing.T, n *servingNode) streamPaths {
	cfg, err := clientcmd.BuildConfigFromFlags("", n.cp.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("%s/api/v1/namespaces/%s/pods", strings.TrimSuffix(cfg.Host, "/"), n.name)
	return streamPaths{
		cfg:       cfg,
		exec:      func(pod string) string { return fmt.Sprintf("%s/%s/exec?container=app&", base, pod) },
		attach:    func(pod string) string { return fmt.Sprintf("%s/%s/attach?container=app&", base, pod) },
		forwardTo: func(pod string) string { return fmt.Sprintf("%s/%s/portforward", base, pod) },
	}
}

// executors are an exec or attach session's clients: SPDY, WebSocket v4
// and WebSocket v5 (kubectl's since 1.30).
func (p streamPaths) executors(t *testing.T, target string) map[string]remotecommand.Executor {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(p.cfg, "POST", u)
	if err != nil {
		t.Fatal(err)
	}
	v4, err := remotecommand.NewWebSocketExecutorForProtocols(p.cfg, "GET", target, "v4.channel.k8s.io")
	if err != nil {
		t.Fatal(err)
	}
	v5, err := remotecommand.NewWebSocketExecutor(p.cfg, "GET", target)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]remotecommand.Executor{"spdy": spdy, "websocket-v4": v4, "websocket-v5": v5}
}

func (p streamPaths) dialers(t *testing.T, pod string) map[string]httpstream.Dialer {
	t.Helper()
	u, err := url.Parse(p.forwardTo(pod))
	if err != nil {
		t.Fatal(err)
	}
	tr, up, err := clientspdy.RoundTripperFor(p.cfg)
	if err != nil {
		t.Fatal(err)
	}
	tunnel, err := portforward.NewSPDYOverWebsocketDialer(u, p.cfg)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]httpstream.Dialer{
		"spdy":                clientspdy.NewDialer(up, &http.Client{Transport: tr}, "POST", u),
		"spdy-over-websocket": tunnel,
	}
}

// checkStreams runs every session kind over every protocol against the
// pods of streamPods.
func checkStreams(t *testing.T, p streamPaths) {
	script := url.QueryEscape("read x; echo got $x; echo oops >&2; exit 7")
	for name, ex := range p.executors(t, p.exec("box")+"command=sh&command=-c&command="+script+"&stdin=true&stdout=true&stderr=true") {
		var stdout, stderr strings.Builder
		err := streamFor(30*time.Second, ex, remotecommand.StreamOptions{Stdin: strings.NewReader("hello\n"), Stdout: &stdout, Stderr: &stderr})
		var code utilexec.ExitError
		if !errors.As(err, &code) || code.ExitStatus() != 7 {
			t.Errorf("exec over %s: err %v, want exit status 7", name, err)
		}
		if stdout.String() != "got hello\n" || stderr.String() != "oops\n" {
			t.Errorf("exec over %s: stdout %q stderr %q", name, stdout.String(), stderr.String())
		}
	}

	// A TTY of the client's size; the shell waits for the first resize
	// to land before it asks.
	sizeCmd := url.QueryEscape("sleep 1; stty size")
	for name, ex := range p.executors(t, p.exec("box")+"command=sh&command=-c&command="+sizeCmd+"&stdin=true&stdout=true&tty=true") {
		var stdout strings.Builder
		pr, pw := io.Pipe()
		err := streamFor(30*time.Second, ex, remotecommand.StreamOptions{Stdin: pr, Stdout: &stdout, Tty: true, TerminalSizeQueue: &fixedSize{}})
		pw.Close()
		if err != nil || strings.TrimSpace(stdout.String()) != "43 132" {
			t.Errorf("exec -t over %s: %q %v, want the size the client set (43 132)", name, stdout.String(), err)
		}
	}

	// Attach to a main process that reads its stdin: a line in, its
	// answer out, then the client leaves.
	for name, ex := range p.executors(t, p.attach("reader")+"stdin=true&stdout=true") {
		pr, pw := io.Pipe()
		out := &waitingWriter{want: "got attached over " + name, seen: make(chan struct{})}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		go fmt.Fprintf(pw, "attached over %s\n", name)
		go func() { <-out.seen; cancel() }()
		err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: pr, Stdout: out})
		pw.Close()
		select {
		case <-out.seen:
		default:
			t.Errorf("attach over %s: %q (%v), want the process's answer %q", name, out.String(), err, out.want)
		}
		cancel()
	}

	for name, d := range p.dialers(t, "web") {
		if body, err := forwardGet(d, 8080); err != nil || !strings.HasPrefix(body, "served by web") {
			t.Errorf("port-forward over %s: %q %v", name, body, err)
		}
	}
}

func TestClusterStreamsStraightToTheNode(t *testing.T) {
	n := startServingNode(t)
	streamPods(n)
	before := n.agent.metric(`podline_server_streams_total{carried="translated"}`)
	checkStreams(t, nodePaths(t, n))
	if after := n.agent.metric(`podline_server_streams_total{carried="translated"}`); after < before+3 {
		t.Errorf("translated sessions %v → %v: the v5 exec, exec -t and attach were not podline's", before, after)
	}
}

// Through the API server: the node declares ExtendWebSocketsToKubelet,
// so the API server hands WebSocket sessions to podline untranslated
// (podline's counters show it), and podline carries them.
func TestClusterStreamsThroughTheAPIServer(t *testing.T) {
	n := startServingNode(t)
	node, err := n.node()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(node.Status.DeclaredFeatures, "ExtendWebSocketsToKubelet") {
		t.Fatalf("declared features %v", node.Status.DeclaredFeatures)
	}
	streamPods(n)
	translated := n.agent.metric(`podline_server_streams_total{carried="translated"}`)
	tunneled := n.agent.metric(`podline_server_streams_total{carried="tunneled"}`)
	checkStreams(t, apiServerPaths(t, n))
	if after := n.agent.metric(`podline_server_streams_total{carried="translated"}`); after < translated+3 {
		t.Errorf("translated sessions %v → %v: the API server translated the v5 sessions itself", translated, after)
	}
	if after := n.agent.metric(`podline_server_streams_total{carried="tunneled"}`); after < tunneled+1 {
		t.Errorf("tunneled sessions %v → %v: the API server unwrapped the tunnel itself", tunneled, after)
	}
}

func streamFor(d time.Duration, ex remotecommand.Executor, opts remotecommand.StreamOptions) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return ex.StreamWithContext(ctx, opts)
}

// fixedSize is a terminal of 132 columns by 43 rows that never resizes.
type fixedSize struct{ sent bool }

func (q *fixedSize) Next() *remotecommand.TerminalSize {
	if q.sent {
		return nil
	}
	q.sent = true
	return &remotecommand.TerminalSize{Width: 132, Height: 43}
}

// waitingWriter closes seen once what was written contains want.
type waitingWriter struct {
	mu   sync.Mutex
	b    strings.Builder
	want string
	seen chan struct{}
	once sync.Once
}

func (w *waitingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if strings.Contains(w.b.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *waitingWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// forwardGet forwards a local port to the pod's port through d and GETs /
// through it.
func forwardGet(d httpstream.Dialer, port int) (string, error) {
	stop, ready := make(chan struct{}), make(chan struct{})
	defer close(stop)
	fw, err := portforward.NewOnAddresses(d, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return "", err
	}
	errc := make(chan error, 1)
	go func() { errc <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-errc:
		return "", fmt.Errorf("forward: %w", err)
	case <-time.After(20 * time.Second):
		return "", errors.New("forward not ready in 20 s")
	}
	ports, err := fw.GetPorts()
	if err != nil {
		return "", err
	}
	c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DialContext: (&net.Dialer{}).DialContext, DisableKeepAlives: true}}
	res, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/", ports[0].Local))
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return string(b), err
}
