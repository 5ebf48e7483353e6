// Package observe watches a node agent from outside, through the interface
// every kubelet-like agent serves: the read-only port's /pods and /metrics.
// The benchmarks observe podline and the upstream kubelet the same way.
package observe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// Client polls one agent's read-only port.
type Client struct {
	URL  string // e.g. http://127.0.0.1:10255
	http *http.Client
}

// New returns a client for the agent serving base.
func New(base string) *Client {
	return &Client{URL: base, http: &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{
		// Keep-alive over one connection: a poll costs the agent one
		// request, not a TCP handshake.
		MaxIdleConnsPerHost: 2, DisableCompression: true,
	}}}
}

// Close drops idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Pod is the part of a v1.Pod the benchmarks read: decoding only this
// keeps the poll loop cheap on the observer's side.
type Pod struct {
	Metadata struct {
		Name string `json:"name"`
		UID  string `json:"uid"`
	} `json:"metadata"`
	Status struct {
		Phase             string `json:"phase"`
		ContainerStatuses []struct {
			ContainerID string `json:"containerID"`
			Ready       bool   `json:"ready"`
			State       struct {
				Running    *struct{} `json:"running"`
				Terminated *struct {
					ExitCode int32 `json:"exitCode"`
				} `json:"terminated"`
			} `json:"state"`
		} `json:"containerStatuses"`
	} `json:"status"`
}

// Running is true when the pod and every container of it run.
func (p *Pod) Running() bool {
	if p.Status.Phase != "Running" || len(p.Status.ContainerStatuses) == 0 {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running == nil || cs.ContainerID == "" {
			return false
		}
	}
	return true
}

// Ready is true when the pod runs and every container of it is ready.
func (p *Pod) Ready() bool {
	if !p.Running() {
		return false
	}
	for _, cs := range p.Status.ContainerStatuses {
		if !cs.Ready {
			return false
		}
	}
	return true
}

// Terminated is true when the pod's first container has ended.
func (p *Pod) Terminated() bool {
	return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Terminated != nil
}

// Pods is one GET /pods; it also returns when the response headers came
// in. An agent takes its snapshot of the pods before it writes a byte, so
// that moment bounds the snapshot from above more tightly than the end of
// the body does.
func (c *Client) Pods(ctx context.Context) ([]Pod, time.Time, error) {
	body, at, err := c.get(ctx, "/pods")
	if err != nil {
		return nil, at, err
	}
	defer func() {
		// Read to the end, or the connection is not reused and every
		// poll costs the agent a new one.
		io.Copy(io.Discard, body)
		body.Close()
	}()
	var list struct {
		Items []Pod `json:"items"`
	}
	if err := json.NewDecoder(body).Decode(&list); err != nil {
		return nil, at, fmt.Errorf("/pods: %w", err)
	}
	return list.Items, at, nil
}

// Metrics fetches /metrics; the caller closes the body.
func (c *Client) Metrics(ctx context.Context) (io.ReadCloser, error) {
	body, _, err := c.get(ctx, "/metrics")
	return body, err
}

// Get fetches path (e.g. "/metrics/probes"); the caller closes the body.
func (c *Client) Get(ctx context.Context, path string) (io.ReadCloser, error) {
	body, _, err := c.get(ctx, path)
	return body, err
}

func (c *Client) get(ctx context.Context, path string) (io.ReadCloser, time.Time, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+path, nil)
	if err != nil {
		return nil, time.Time{}, err
	}
	resp, err := c.http.Do(req)
	at := time.Now()
	if err != nil {
		return nil, at, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, at, fmt.Errorf("%s: %s", path, resp.Status)
	}
	return resp.Body, at, nil
}

// FreePort returns a loopback TCP port free at the moment of the call.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// LogTail returns the last n lines of the log at path (reading at most its
// last 16 KiB), for errors that say why an agent died.
func LogTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	defer f.Close()
	const window = 16 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > window {
		f.Seek(fi.Size()-window, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
