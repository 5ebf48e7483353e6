package prober

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http/httpguts"
	v1 "k8s.io/api/core/v1"
)

const (
	// userAgent is the kubelet's for the Kubernetes release podline
	// follows: applications and their logs tell probes apart by it.
	userAgent = "kube-probe/1.36"
	// maxRedirects is how many same-host redirects a probe follows.
	maxRedirects = 10
)

// bodyBuffers hold the first maxOutput bytes of a response body: read so
// that a small answer is taken whole before the connection closes, kept
// only when an event needs it.
var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, maxOutput); return &b }}

// readers buffer a response's status line and headers.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4<<10) }}

var errTooManyRedirects = errors.New("stopped after 10 redirects")

// probeTLS skips verification, as the kubelet's probes do: a pod's
// certificate is for its clients, not for the node.
var probeTLS = &tls.Config{InsecureSkipVerify: true}

// httpHandler is an httpGet probe, its URL and headers prepared once.
type httpHandler struct {
	url        url.URL // scheme, path and query; the host is set per run
	host       string  // httpGet.host; the pod IP when empty
	port       string
	header     http.Header // the request's headers but Host (hooks send them through net/http)
	wire       []byte      // the same as header lines, ready to send
	hostHeader string      // a Host header the user set
	bad        string      // a header no request may carry: every run fails
	err        error       // the port did not resolve: every run errors
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
	header := make(http.Header, len(g.HTTPHeaders)+2)
	for _, hd := range g.HTTPHeaders {
		header.Add(hd.Name, hd.Value)
	}
	if _, ok := header["User-Agent"]; !ok {
		header.Set("User-Agent", ua)
	}
	if _, ok := header["Accept"]; !ok {
		header.Set("Accept", "*/*")
	} else if header.Get("Accept") == "" {
		// An empty Accept set by the user means none at all.
		header.Del("Accept")
	}
	h.hostHeader = header.Get("Host")
	header.Del("Host")
	header.Del("Connection")
	for name, values := range header {
		for _, v := range values {
			if !httpguts.ValidHeaderFieldName(name) || !httpguts.ValidHeaderFieldValue(v) {
				h.bad = fmt.Sprintf("invalid header %q", name)
			}
		}
	}
	var b strings.Builder
	_ = header.Write(&b)
	b.WriteString("Connection: close\r\n\r\n")
	h.header, h.wire = header, []byte(b.String())
	return h
}

// run sends the GET, to the pod's address unless the action names a
// host, and follows same-host redirects, all within timeout.
func (h *httpHandler) run(ctx context.Context, t target, timeout time.Duration) outcome {
	if h.err != nil {
		return outcome{verdict: errored, err: h.err}
	}
	host := h.host
	if host == "" {
		host = t.ip
	}
	u := h.url
	u.Host = net.JoinHostPort(host, h.port)
	if h.bad != "" {
		return outcome{verdict: failed, output: fmt.Sprintf("Get %q: %s", u.String(), h.bad)}
	}
	deadline := time.Now().Add(timeout)
	hostHeader := h.hostHeader
	buf := bodyBuffers.Get().(*[]byte)
	defer bodyBuffers.Put(buf)
	for hops := 1; ; hops++ {
		code, location, n, err := h.get(ctx, &u, hostHeader, deadline, *buf)
		if err != nil {
			return outcome{verdict: failed, output: requestError(&u, err)}
		}
		if location != "" && isRedirect(code) {
			next, err := u.Parse(location)
			switch {
			case err != nil:
				return outcome{verdict: failed, output: fmt.Sprintf("Get %q: failed to parse Location header %q: %v", u.String(), location, err)}
			case next.Hostname() != host:
				// Not followed: the run ends with the 3xx itself.
			case hops >= maxRedirects:
				return outcome{verdict: failed, output: fmt.Sprintf("Get %q: %v", next.String(), errTooManyRedirects)}
			default:
				if next.IsAbs() {
					hostHeader = "" // a Host the user set is for the first URL's host
				}
				u = *next
				continue
			}
		}
		switch {
		case code >= 200 && code < 300:
			return outcome{verdict: succeeded}
		case code >= 300 && code < 400:
			return outcome{verdict: warned, output: "Probe terminated redirects, Response body: " + string((*buf)[:n])}
		}
		// Never the body: it may hold what the application would not show
		// in an event (kubernetes/kubernetes#99425).
		return outcome{verdict: failed, output: fmt.Sprintf("HTTP probe failed with statuscode: %d", code)}
	}
}

// ownSockets sends plain-HTTP probes to an address on a socket of their
// own (probeSocket) rather than through Go's dialer. Tests turn it off to
// hold both paths to the same behaviour.
var ownSockets = true

// get makes one request on a connection of its own and closes it. It
// returns the status, the Location header and how much of the body (up to
// len(body)) it read into body; a body cut short changes nothing.
func (h *httpHandler) get(ctx context.Context, u *url.URL, hostHeader string, deadline time.Time, body []byte) (code int, location string, n int, err error) {
	if hostHeader == "" {
		hostHeader = u.Host
	}
	req := make([]byte, 0, 64+len(u.Path)+len(u.RawQuery)+len(hostHeader)+len(h.wire))
	req = append(req, "GET "...)
	req = append(req, u.RequestURI()...)
	req = append(req, " HTTP/1.1\r\nHost: "...)
	req = append(req, hostHeader...)
	req = append(req, "\r\n"...)
	req = append(req, h.wire...)

	var conn io.ReadCloser
	if ap, perr := netip.ParseAddrPort(u.Host); ownSockets && perr == nil && u.Scheme == "http" && ap.Addr().Zone() == "" {
		conn, err = dialSocket(ctx, ap, deadline, req)
	} else {
		conn, err = dialNet(ctx, u, deadline, req)
	}
	if err != nil {
		return 0, "", 0, err
	}
	defer conn.Close()
	br := readers.Get().(*bufio.Reader)
	br.Reset(conn)
	defer func() { br.Reset(nil); readers.Put(br) }()
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		return 0, "", 0, err
	}
	n, _ = io.ReadFull(res.Body, body)
	return res.StatusCode, res.Header.Get("Location"), n, nil
}

// dialNet connects through Go's dialer, with TLS for https, and sends
// req: for what the probe's own socket does not do (https, a host name).
func dialNet(ctx context.Context, u *url.URL, deadline time.Time, req []byte) (io.ReadCloser, error) {
	d := probeDialer
	d.Deadline = deadline
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, err
	}
	if err := conn.SetDeadline(deadline); err != nil {
		conn.Close()
		return nil, err
	}
	c := &netConn{Conn: conn}
	if ctx.Done() != nil {
		// A cancelled context cuts every wait short.
		c.stop = context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	}
	if u.Scheme == "https" {
		tc := tls.Client(conn, tlsFor(u.Hostname()))
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		c.Conn = tc
	}
	if _, err := c.Write(req); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// netConn is a probe's connection through Go's dialer and what ties it to
// the run's context, undone when it closes.
type netConn struct {
	net.Conn
	stop func() bool
}

func (c *netConn) Close() error {
	if c.stop != nil {
		c.stop()
	}
	return c.Conn.Close()
}

// tlsFor is the TLS configuration for a server name: SNI for a host name,
// none for an address.
func tlsFor(host string) *tls.Config {
	if net.ParseIP(host) != nil {
		return probeTLS
	}
	c := probeTLS.Clone()
	c.ServerName = host
	return c
}

// isRedirect reports whether a status is one a client follows.
func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// requestError words a failed request as the kubelet's events do (they
// come from Go's HTTP client there).
func requestError(u *url.URL, err error) string {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("Get %q: context deadline exceeded (Client.Timeout exceeded while awaiting headers)", u.String())
	}
	return fmt.Sprintf("Get %q: %v", u.String(), err)
}
