package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/podline/podline/bench/internal/procstat"
)

// servePKI is a CA of the suite's, the serving certificate it gives
// podline's authenticated port and the client certificate the suite
// connects with.
type servePKI struct {
	caFile, serverCert, serverKey string // files podline reads
	roots                         *x509.CertPool
	client                        tls.Certificate
}

func newServePKI(dir string) (*servePKI, error) {
	dir = filepath.Join(dir, "pki")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "podline-bench-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey, error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
			tmpl.DNSNames = []string{"localhost", nodeName}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		return der, key, err
	}
	p := &servePKI{
		caFile:     filepath.Join(dir, "ca.pem"),
		serverCert: filepath.Join(dir, "server.pem"),
		serverKey:  filepath.Join(dir, "server-key.pem"),
		roots:      x509.NewCertPool(),
	}
	p.roots.AddCert(ca)
	srvDER, srvKey, err := leaf(2, nodeName, x509.ExtKeyUsageServerAuth)
	if err != nil {
		return nil, err
	}
	cliDER, cliKey, err := leaf(3, "podline-bench", x509.ExtKeyUsageClientAuth)
	if err != nil {
		return nil, err
	}
	srvKeyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		return nil, err
	}
	for path, blk := range map[string]*pem.Block{
		p.caFile:     {Type: "CERTIFICATE", Bytes: caDER},
		p.serverCert: {Type: "CERTIFICATE", Bytes: srvDER},
		p.serverKey:  {Type: "EC PRIVATE KEY", Bytes: srvKeyDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(blk), 0o600); err != nil {
			return nil, err
		}
	}
	p.client = tls.Certificate{Certificate: [][]byte{cliDER}, PrivateKey: cliKey}
	return p, nil
}

// tlsClient talks to podline's authenticated port with the client
// certificate, verifying the serving certificate against the suite's CA.
type tlsClient struct {
	base string
	tr   *http.Transport
	http *http.Client
}

func newTLSClient(port int, p *servePKI) *tlsClient {
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: p.roots, Certificates: []tls.Certificate{p.client}, MinVersion: tls.VersionTLS12},
		MaxIdleConnsPerHost: 2,
		DisableCompression:  true,
	}
	return &tlsClient{base: fmt.Sprintf("https://127.0.0.1:%d", port), tr: tr, http: &http.Client{Transport: tr}}
}

// Get fetches path; the caller reads and closes the body.
func (c *tlsClient) Get(ctx context.Context, path string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("%s: %s: %s", path, resp.Status, strings.TrimSpace(string(msg)))
	}
	return resp.Body, nil
}

func (c *tlsClient) close() { c.tr.CloseIdleConnections() }

// The log lines every followed file holds before the followers connect,
// and the one appended once they have read those.
var (
	logLines    = []string{"hello 1", "hello 2"}
	logAppended = "hello 3"
)

// criLine is one full stdout line in the CRI log format.
func criLine(msg string) string { return "2026-11-25T10:00:00.000000000Z stdout F " + msg + "\n" }

// serveWindow is how long the agent is watched with and without
// followers.
func serveWindow(quick bool) time.Duration {
	if quick {
		return 5 * time.Second
	}
	return 30 * time.Second
}

// usage is the agent over a window: CPU, and at its end goroutines
// (go_goroutines of /metrics), open fds and RSS.
type usage struct {
	CPUPercent float64 `json:"cpu_percent"`
	Goroutines int     `json:"goroutines"`
	FDs        int     `json:"fds"`
	RSSMiB     float64 `json:"rss_mib"`
}

// followCost is one follower per pod on the authenticated port.
type followCost struct {
	Followers  int     `json:"followers"`
	Existing   int     `json:"existing"` // followers that received the lines already in the file
	Appended   int     `json:"appended"` // and then the line appended to it
	ConnectSec float64 `json:"connect_sec"`
	// Errors counts the followers' failures by message.
	Errors map[string]int `json:"errors,omitempty"`
	// AgentLogErrors counts podline's "container log" warnings, the
	// failures it logged after answering 200; AgentLogFirst is the first.
	AgentLogErrors int    `json:"agent_log_errors"`
	AgentLogFirst  string `json:"agent_log_first,omitempty"`
	Without        usage  `json:"without"` // the window before any follower
	With           usage  `json:"with"`    // the window with all of them connected and idle
	After          usage  `json:"after"`   // once closed (no CPU figure)
	Returned       bool   `json:"returned"`
}

// podRef is what the followers need of a pod in /pods.
type podRef struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		UID       string `json:"uid"`
	} `json:"metadata"`
}

func listPods(ctx context.Context, a agent) ([]podRef, error) {
	body, err := a.client().Get(ctx, "/pods")
	if err != nil {
		return nil, err
	}
	defer body.Close()
	var list struct {
		Items []podRef `json:"items"`
	}
	return list.Items, json.NewDecoder(body).Decode(&list)
}

// podLogFile is where podline keeps the log of a pod's container, first
// attempt.
func podLogFile(logsDir string, p podRef, container string) string {
	m := p.Metadata
	return filepath.Join(logsDir, m.Namespace+"_"+m.Name+"_"+m.UID, container, "0.log")
}

func appendFile(path, data string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	_, err = f.WriteString(data)
	return errors.Join(err, f.Close())
}

// measureWindow watches the agent for d with nobody talking to it, then
// reads goroutines, fds and RSS.
func measureWindow(ctx context.Context, a agent, d time.Duration) (usage, error) {
	c0, err := procstat.Read(a.pid(), false)
	if err != nil {
		return usage{}, err
	}
	t0 := time.Now()
	if err := sleep(ctx, d); err != nil {
		return usage{}, err
	}
	c1, err := procstat.Read(a.pid(), false)
	if err != nil {
		return usage{}, err
	}
	u := snapshot(ctx, a, c1)
	u.CPUPercent = 100 * (c1.CPUSeconds() - c0.CPUSeconds()) / time.Since(t0).Seconds()
	return u, nil
}

func snapshot(ctx context.Context, a agent, c procstat.Cost) usage {
	return usage{
		Goroutines: goroutines(ctx, a),
		FDs:        countDir(fmt.Sprintf("/proc/%d/fd", a.pid())),
		RSSMiB:     float64(c.RSS) / (1 << 20),
	}
}

// follower is one /containerLogs?follow=true stream.
type follower struct {
	lines int // lines received as expected
	err   error
}

// followers holds every stream of a run.
type followers struct {
	mu  sync.Mutex
	all []*follower
	wg  sync.WaitGroup
}

// count returns how many followers have received at least n lines and how
// many have failed.
func (fs *followers) count(n int) (got, failed int) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for _, f := range fs.all {
		switch {
		case f.lines >= n:
			got++
		case f.err != nil:
			failed++
		}
	}
	return got, failed
}

// errors counts the failures by message.
func (fs *followers) errors() map[string]int {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	var m map[string]int
	for _, f := range fs.all {
		if f.err != nil {
			if m == nil {
				m = map[string]int{}
			}
			m[f.err.Error()]++
		}
	}
	return m
}

// follow streams path until ctx ends, checking each line against want.
// At most cap(connecting) streams at a time are between their request and
// the file's first lines, to keep the handshakes from piling up.
func (fs *followers) follow(ctx context.Context, c *tlsClient, path string, want []string, connecting chan struct{}) {
	f := &follower{}
	fs.mu.Lock()
	fs.all = append(fs.all, f)
	fs.mu.Unlock()
	fs.wg.Add(1)
	go func() {
		defer fs.wg.Done()
		connecting <- struct{}{}
		released := false
		release := func() {
			if !released {
				released = true
				<-connecting
			}
		}
		defer release()
		fail := func(err error) {
			fs.mu.Lock()
			f.err = err
			fs.mu.Unlock()
		}
		body, err := c.Get(ctx, path)
		if err != nil {
			if ctx.Err() == nil {
				fail(err)
			}
			return
		}
		defer body.Close()
		sc := bufio.NewScanner(body)
		for sc.Scan() {
			fs.mu.Lock()
			n := f.lines
			if n >= len(want) || sc.Text() != want[n] {
				f.err = fmt.Errorf("unexpected line %d: %q", n+1, sc.Text())
				fs.mu.Unlock()
				return
			}
			f.lines++
			fs.mu.Unlock()
			if n+1 >= len(logLines) {
				release()
			}
		}
		if ctx.Err() == nil {
			fs.mu.Lock()
			f.err = fmt.Errorf("stream ended after %d lines: %v", f.lines, sc.Err())
			fs.mu.Unlock()
		}
	}()
}

// waitLines waits until every follower has n lines or failed.
func (fs *followers) waitLines(ctx context.Context, n, total int, timeout time.Duration, label string) (int, error) {
	deadline := time.Now().Add(timeout)
	last := time.Now()
	for {
		got, failed := fs.count(n)
		if got+failed == total {
			return got, nil
		}
		if time.Now().After(deadline) {
			return got, nil
		}
		if time.Since(last) > 2*time.Second {
			progress("%s: %d/%d followers have %d lines, %d failed", label, got, total, n, failed)
			last = time.Now()
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return got, err
		}
	}
}

// followCase: the no-follower window, then a follower per pod, the window
// with all of them idle, and the agent once they are closed.
func (s *suite) followCase(ctx context.Context, a agent, dir string, port int, pki *servePKI, label string) (*followCost, error) {
	pods, err := listPods(ctx, a)
	if err != nil {
		return nil, err
	}
	res := &followCost{Followers: len(pods)}
	var existing strings.Builder
	for _, l := range logLines {
		existing.WriteString(criLine(l))
	}
	var files []string
	for _, p := range pods {
		path := podLogFile(servePodLogsDir(dir), p, "app")
		if err := appendFile(path, existing.String()); err != nil {
			return nil, err
		}
		files = append(files, path)
	}
	window := serveWindow(s.cfg.quick)
	if res.Without, err = measureWindow(ctx, a, window); err != nil {
		return nil, err
	}
	progress("%s: no followers: CPU %.2f%%, goroutines %d, fds %d, RSS %.0f MiB",
		label, res.Without.CPUPercent, res.Without.Goroutines, res.Without.FDs, res.Without.RSSMiB)

	c := newTLSClient(port, pki)
	defer c.close()
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fs := &followers{}
	connecting := make(chan struct{}, 32)
	want := append(append([]string{}, logLines...), logAppended)
	start := time.Now()
	for _, p := range pods {
		m := p.Metadata
		fs.follow(fctx, c, fmt.Sprintf("/containerLogs/%s/%s/app?follow=true", m.Namespace, m.Name), want, connecting)
	}
	timeout := 30*time.Second + time.Duration(len(pods))*30*time.Millisecond
	if res.Existing, err = fs.waitLines(ctx, len(logLines), len(pods), timeout, label); err != nil {
		return nil, err
	}
	res.ConnectSec = time.Since(start).Seconds()
	progress("%s: %d/%d followers received the existing lines in %.1fs", label, res.Existing, len(pods), res.ConnectSec)
	for _, f := range files {
		if err := appendFile(f, criLine(logAppended)); err != nil {
			return nil, err
		}
	}
	if res.Appended, err = fs.waitLines(ctx, len(want), len(pods), 30*time.Second, label); err != nil {
		return nil, err
	}
	progress("%s: %d/%d followers received the appended line", label, res.Appended, len(pods))
	// A settle as long as the window first: connecting a thousand
	// followers leaves garbage, and the Go runtime's collecting it and
	// handing the memory back to the kernel (its scavenger) is work of
	// the connecting, not of idle followers.
	if err := sleep(ctx, window); err != nil {
		return nil, err
	}
	if res.With, err = measureWindow(ctx, a, window); err != nil {
		return nil, err
	}
	progress("%s: %d followers: CPU %.2f%%, goroutines %d, fds %d, RSS %.0f MiB",
		label, res.Existing, res.With.CPUPercent, res.With.Goroutines, res.With.FDs, res.With.RSSMiB)
	res.Errors = fs.errors()

	cancel()
	fs.wg.Wait()
	c.close()
	// The agent notices each closed stream on its own: give it a moment.
	deadline := time.Now().Add(20 * time.Second)
	for {
		cost, err := procstat.Read(a.pid(), false)
		if err != nil {
			return nil, err
		}
		res.After = snapshot(ctx, a, cost)
		res.Returned = res.After.Goroutines <= res.Without.Goroutines+returnSlack && res.After.FDs <= res.Without.FDs+returnSlack
		if res.Returned || time.Now().After(deadline) {
			break
		}
		if err := sleep(ctx, 500*time.Millisecond); err != nil {
			return nil, err
		}
	}
	progress("%s: followers closed: goroutines %d, fds %d (baseline %d, %d)",
		label, res.After.Goroutines, res.After.FDs, res.Without.Goroutines, res.Without.FDs)
	if pl, ok := a.(*podlineAgent); ok {
		res.AgentLogErrors, res.AgentLogFirst = logWarnings(pl.logPath, `msg="container log"`)
	}
	return res, nil
}

// returnSlack is how far above the baseline goroutines and fds may stay
// after the followers close and still count as back.
const returnSlack = 3

// logWarnings counts the lines of the log at path that contain what, and
// returns the first.
func logWarnings(path, what string) (int, string) {
	f, err := os.Open(path)
	if err != nil {
		return 0, ""
	}
	defer f.Close()
	n, first := 0, ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), what) {
			if n == 0 {
				first = sc.Text()
			}
			n++
		}
	}
	return n, first
}
