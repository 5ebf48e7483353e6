package prober

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
)

const (
	// userAgent is the kubelet's for the Kubernetes release podline
	// follows: applications and their logs tell probes apart by it.
	userAgent = "kube-probe/1.36"
	// maxRedirects is how many same-host redirects a probe follows.
	maxRedirects = 10
)

// probeTransport is shared by every HTTP probe. Keep-alives are off, as
// the kubelet has them: thousands of pods probed every few seconds would
// otherwise each keep an idle connection (an fd here and a socket in the
// container) between runs, and a container restarted behind the same IP
// would be reached on a dead one. Every run opens one connection and
// closes it with the response body. No proxy: the targets are pod IPs.
var probeTransport = &http.Transport{
	DialContext:       (&net.Dialer{}).DialContext,
	TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
	DisableKeepAlives: true,
}

// bodyBuffers hold the first maxOutput bytes of a response body: read so
// that a small answer is taken whole before the connection closes, kept
// only when an event needs it.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, maxOutput); return &b }}

var errTooManyRedirects = errors.New("stopped after 10 redirects")

// sameHostRedirects follows redirects as the kubelet does: to the same host
// only (a probe must not be sent elsewhere by the container it checks),
// at most maxRedirects. A redirect elsewhere ends the run with the 3xx
// itself, which succeeds with a warning.
func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if req.URL.Hostname() != via[0].URL.Hostname() {
		return http.ErrUseLastResponse
	}
	if len(via) >= maxRedirects {
		return errTooManyRedirects
	}
	return nil
}

// httpHandler is an httpGet probe, its URL and headers prepared once.
type httpHandler struct {
	url        url.URL // scheme, path and query; the host is set per run
	host       string  // httpGet.host; the pod IP when empty
	port       string
	header     http.Header
	hostHeader string
	err        error // the port did not resolve: every run errors
}

func newHTTPHandler(g *v1.HTTPGetAction, c *v1.Container) *httpHandler {
	return newHTTPHandlerAs(g, c, userAgent)
}

// newHTTPHandlerAs prepares a GET that says it is ua unless the user set
// a User-Agent: probes and lifecycle hooks tell themselves apart by it.
func newHTTPHandlerAs(g *v1.HTTPGetAction, c *v1.Container, ua string) *httpHandler {
	h := &httpHandler{host: g.Host}
	port, err := resolvePort(g.Port, c)
	if err != nil {
		h.err = err
		return h
	}
	h.port = strconv.Itoa(port)
	if u, err := url.Parse(g.Path); err == nil {
		h.url = *u
	} else {
		// A path url.Parse refuses went through validation: send it as is,
		// as the kubelet does, and let the server answer.
		h.url = url.URL{Path: g.Path}
	}
	h.url.Scheme = strings.ToLower(string(g.Scheme))
	if h.url.Scheme == "" {
		h.url.Scheme = "http"
	}
	h.header = make(http.Header, len(g.HTTPHeaders)+2)
	for _, hd := range g.HTTPHeaders {
		h.header.Add(hd.Name, hd.Value)
	}
	if _, ok := h.header["User-Agent"]; !ok {
		h.header.Set("User-Agent", ua)
	}
	if _, ok := h.header["Accept"]; !ok {
		h.header.Set("Accept", "*/*")
	} else if h.header.Get("Accept") == "" {
		// An empty Accept set by the user means none at all.
		h.header.Del("Accept")
	}
	h.hostHeader = h.header.Get("Host")
	return h
}

// request is the GET of one run, to the pod's address ip unless the
// action names a host.
func (h *httpHandler) request(ctx context.Context, ip string) (*http.Request, error) {
	host := h.host
	if host == "" {
		host = ip
	}
	u := h.url
	u.Host = net.JoinHostPort(host, h.port)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	// The header map is the handler's own and never runs twice at once;
	// the client copies it for redirects and never writes to it.
	req.Header = h.header
	req.Host = h.hostHeader
	return req, nil
}

func (h *httpHandler) run(ctx context.Context, t target, timeout time.Duration) outcome {
	if h.err != nil {
		return outcome{verdict: errored, err: h.err}
	}
	req, err := h.request(ctx, t.ip)
	if err != nil {
		return outcome{verdict: failed, output: err.Error()}
	}
	client := http.Client{Transport: probeTransport, CheckRedirect: sameHostRedirects, Timeout: timeout}
	res, err := client.Do(req)
	if err != nil {
		// Refused, timed out, too many redirects: the error is the message.
		return outcome{verdict: failed, output: err.Error()}
	}
	defer res.Body.Close()
	buf := bodyBuffers.Get().(*[]byte)
	defer bodyBuffers.Put(buf)
	// The status decides; the body is read up to maxOutput (a larger one
	// is cut when the connection closes) and a read error changes nothing.
	n, _ := io.ReadFull(res.Body, *buf)
	switch {
	case res.StatusCode >= 200 && res.StatusCode < 300:
		return outcome{verdict: succeeded}
	case res.StatusCode >= 300 && res.StatusCode < 400:
		return outcome{verdict: warned, output: "Probe terminated redirects, Response body: " + string((*buf)[:n])}
	}
	// Never the body: it may hold what the application would not show in
	// an event (kubernetes/kubernetes#99425).
	return outcome{verdict: failed, output: fmt.Sprintf("HTTP probe failed with statuscode: %d", res.StatusCode)}
}
