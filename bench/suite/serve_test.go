package main

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/podline/podline/bench/internal/result"
)

func TestMedianAndGroups(t *testing.T) {
	if got := medCell([]float64{3, 1, 2}, 1); got != "2.0 (1.0–3.0)" {
		t.Errorf("medCell = %q", got)
	}
	if got := medCell([]float64{4, 1, 2, 3}, 1); got != "2.5 (1.0–4.0)" {
		t.Errorf("even medCell = %q", got)
	}
	if got := medCell([]float64{5}, 0); got != "5" {
		t.Errorf("single medCell = %q", got)
	}
	if got := medCell([]float64{2, 2.01}, 1); got != "2.0" {
		t.Errorf("flat medCell = %q", got)
	}
	xs := []float64{3, 1, 2}
	median(xs)
	if xs[0] != 3 {
		t.Error("median sorted its argument")
	}
	keys, by := groupBy([]int{5, 2, 7, 4}, func(x int) bool { return x%2 == 0 })
	if len(keys) != 2 || keys[0] != false || len(by[false]) != 2 || by[true][1] != 4 {
		t.Errorf("groupBy = %v %v", keys, by)
	}

	runs := []serveRun{
		{Agent: podline, Pods: 10, Run: 1, Gets: []getCost{{Port: portReadOnly, Path: "/pods", CPUms: 1}, {Port: portSecure, Path: "/pods", CPUms: 2}}},
		{Agent: podline, Pods: 10, Run: 2, Gets: []getCost{{Port: portReadOnly, Path: "/pods", CPUms: 3}, {Port: portSecure, Path: "/pods", Error: "boom"}}},
	}
	rows, gets := getRows(runs)
	if len(rows) != 2 || rows[0].port != portReadOnly || len(gets[rows[0]]) != 2 || len(gets[rows[1]]) != 1 {
		t.Errorf("getRows = %v %v", rows, gets)
	}
}

func TestMeasureGets(t *testing.T) {
	calls := 0
	get := func(ctx context.Context, path string) (io.ReadCloser, error) {
		calls++
		return io.NopCloser(strings.NewReader(strings.Repeat("x", 100))), nil
	}
	g := measureGets(context.Background(), os.Getpid(), get, portReadOnly, "/pods", 5, 0)
	if g.Error != "" || calls != 6 || g.Requests != 5 || g.Bytes != 100 || g.P50ms < 0 || g.P99ms < g.P50ms {
		t.Errorf("measureGets = %+v after %d calls", g, calls)
	}
	fail := func(ctx context.Context, path string) (io.ReadCloser, error) { return nil, io.ErrUnexpectedEOF }
	if g := measureGets(context.Background(), os.Getpid(), fail, portReadOnly, "/pods", 5, 0); g.Error == "" {
		t.Error("a failing GET gave no error")
	}
}

func TestServeMarkdown(t *testing.T) {
	runs := []serveRun{
		{Agent: podline, Pods: 1000, Run: 1, StartSec: 3, Gets: []getCost{{Port: portReadOnly, Path: "/pods", CPUms: 4, P50ms: 5, P99ms: 9, Bytes: 2048}},
			Follow: &followCost{Followers: 1000, Existing: 128, Appended: 128, Errors: map[string]int{"stream ended after 0 lines: <nil>": 872},
				AgentLogErrors: 872, AgentLogFirst: `level=WARN msg="container log" err="too many open files"`}},
		{Agent: kubelet, Pods: 1000, Run: 1, Gets: []getCost{{Port: portReadOnly, Path: "/stats/summary", Error: "500 | oops"}}},
	}
	md := serveMarkdown(&result.Run{}, 10*time.Second, 30*time.Second, runs, []string{"serve kubelet run 2: died"})
	for _, want := range []string{
		"| podline | 1000 | read-only | /pods | 1 | 4.00 |",
		"| podline | 1000 | 1 | 1000 | 128 | 128 |",
		"- 872 × stream ended after 0 lines",
		"too many open files",
		`500 \| oops`,
		"- serve kubelet run 2: died",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// The failed GET is in no median.
	if strings.Contains(md, "| kubelet | 1000 | read-only | /stats/summary | 1 |") {
		t.Errorf("a failed GET has a median row:\n%s", md)
	}
}

func TestPodLogFile(t *testing.T) {
	var p podRef
	p.Metadata.Name, p.Metadata.Namespace, p.Metadata.UID = "bench-00001-bench", "default", "abc"
	if got := podLogFile("/l", p, "app"); got != "/l/default_bench-00001-bench_abc/app/0.log" {
		t.Errorf("podLogFile = %q", got)
	}
	if got := criLine("hi"); got != "2026-11-25T10:00:00.000000000Z stdout F hi\n" {
		t.Errorf("criLine = %q", got)
	}
}

// The followers against a TLS server that wants the suite's client
// certificate: lines in order, an appended line, a stream that ends early.
func TestFollowersOverTLS(t *testing.T) {
	pki, err := newServePKI(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(pki.serverCert, pki.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	appended := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TLS.PeerCertificates) == 0 {
			http.Error(w, "no client certificate", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "hello 1\nhello 2\n")
		w.(http.Flusher).Flush()
		if strings.Contains(r.URL.Path, "short") {
			return
		}
		select {
		case <-appended:
			io.WriteString(w, "hello 3\n")
			w.(http.Flusher).Flush()
		case <-r.Context().Done():
			return
		}
		<-r.Context().Done()
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pki.roots}
	srv.StartTLS()
	defer srv.Close()
	_, portStr, _ := net.SplitHostPort(srv.Listener.Addr().String())
	port, _ := strconv.Atoi(portStr)
	c := newTLSClient(port, pki)
	defer c.close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fs := &followers{}
	connecting := make(chan struct{}, 2)
	want := append(append([]string{}, logLines...), logAppended)
	for _, path := range []string{"/a", "/b", "/c", "/short"} {
		fs.follow(ctx, c, path, want, connecting)
	}
	if got, err := fs.waitLines(ctx, 2, 4, 10*time.Second, "test"); err != nil || got != 4 {
		t.Fatalf("existing lines: %d followers, %v; errors %v", got, err, fs.errors())
	}
	close(appended)
	if got, err := fs.waitLines(ctx, 3, 4, 10*time.Second, "test"); err != nil || got != 3 {
		t.Fatalf("appended line: %d followers, %v; errors %v", got, err, fs.errors())
	}
	errs := fs.errors()
	if len(errs) != 1 || errs["stream ended after 2 lines: <nil>"] != 1 {
		t.Errorf("errors %v", errs)
	}
	cancel()
	fs.wg.Wait()
	if got := fs.errors(); len(got) != 1 {
		t.Errorf("closing added errors: %v", got)
	}
}
