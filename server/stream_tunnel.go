package server

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	gwebsocket "github.com/gorilla/websocket"
	pfconst "k8s.io/apimachinery/pkg/util/portforward"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// Port-forward over WebSocket, as kubectl 1.31+ and client-go's
// SPDYOverWebsocketDialer do it, is SPDY carried inside WebSocket binary
// messages: the client offers "SPDY/3.1+portforward.k8s.io" as its
// WebSocket subprotocol and then speaks SPDY in the tunnel. Runtimes'
// streaming servers take SPDY port-forwards but not the tunnel, so podline
// opens the SPDY upgrade to the runtime itself, then accepts the client's
// WebSocket and copies bytes between the two without reading them.

// wantsTunnel reports a WebSocket request that offers a tunneled SPDY
// protocol.
func wantsTunnel(r *http.Request) bool {
	return wsstream.IsWebSocketRequestWithTunnelingProtocol(r)
}

// tunneledProtocols are the SPDY protocols the client offers inside the
// tunnel, in its order.
func tunneledProtocols(r *http.Request) []string {
	var out []string
	for _, p := range gwebsocket.Subprotocols(r) {
		if strings.HasPrefix(p, pfconst.WebsocketsSPDYTunnelingPrefix) && strings.HasSuffix(p, pfconst.KubernetesSuffix) {
			out = append(out, strings.TrimPrefix(p, pfconst.WebsocketsSPDYTunnelingPrefix))
		}
	}
	return out
}

// tunnelUpgrader accepts any origin: callers authenticate with client
// certificates or bearer tokens, never with cookies a browser would add to
// a cross-site request, and the kubelet does not look at Origin either.
var tunnelUpgrader = gwebsocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// tunnel serves a tunneled port-forward with the runtime's streaming
// server at loc.
func (s *Secure) tunnel(w http.ResponseWriter, r *http.Request, loc *url.URL) {
	streamsTunneled.Inc()
	protocols := tunneledProtocols(r)
	if len(protocols) == 0 {
		httpError(w, fmt.Errorf("%w: no tunneled SPDY protocol offered", ErrBadRequest))
		return
	}
	// The runtime first: if it refuses, the client gets its answer as a
	// plain HTTP error rather than a WebSocket that closes at once.
	upstream, protocol, err := dialSPDY(r, loc, protocols)
	if err != nil {
		tunnelFailures.Inc()
		s.logger().Warn("stream relay failed", "path", r.URL.Path, "err", err)
		http.Error(w, "stream: the runtime's streaming server did not take the session", http.StatusBadGateway)
		return
	}
	defer upstream.Close()
	up := tunnelUpgrader
	up.Subprotocols = []string{pfconst.WebsocketsSPDYTunnelingPrefix + protocol}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		// Upgrade has answered the client.
		tunnelFailures.Inc()
		return
	}
	client := portforward.NewTunnelingConnection("server", ws)
	defer client.Close()
	splice(client, upstream)
}

// dialSPDY opens a SPDY/3.1 upgrade to loc offering protocols and returns
// the raw connection once the runtime switched protocols, with the one it
// chose.
func dialSPDY(r *http.Request, loc *url.URL, protocols []string) (io.ReadWriteCloser, string, error) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, loc.String(), nil)
	if err != nil {
		return nil, "", err
	}
	req.Header.Set(httpstream.HeaderConnection, httpstream.HeaderUpgrade)
	req.Header.Set(httpstream.HeaderUpgrade, spdy.HeaderSpdy31)
	for _, p := range protocols {
		req.Header.Add(httpstream.HeaderProtocolVersion, p)
	}
	// A transport of its own: no proxy from the environment, no pooling of
	// a connection that becomes the session's.
	tr := &http.Transport{Proxy: noProxy, DisableKeepAlives: true}
	c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, "", fmt.Errorf("runtime answered %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	if !headerHasToken(resp.Header, httpstream.HeaderConnection, httpstream.HeaderUpgrade) ||
		!strings.EqualFold(resp.Header.Get(httpstream.HeaderUpgrade), spdy.HeaderSpdy31) {
		resp.Body.Close()
		return nil, "", fmt.Errorf("runtime switched to %q, not %s", resp.Header.Get(httpstream.HeaderUpgrade), spdy.HeaderSpdy31)
	}
	rwc, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		resp.Body.Close()
		return nil, "", fmt.Errorf("runtime switched protocols but the connection is not writable")
	}
	protocol := resp.Header.Get(httpstream.HeaderProtocolVersion)
	if protocol == "" {
		// A server that skips the header picked the first, as the
		// handshake's fallback does.
		protocol = protocols[0]
	}
	return rwc, protocol, nil
}

// headerHasToken reports whether a comma-separated header holds token.
func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// splice copies both ways until either side ends, then closes both, so
// that the other copy ends too.
func splice(a, b io.ReadWriteCloser) {
	var once sync.Once
	done := make(chan struct{})
	stop := func() {
		once.Do(func() {
			a.Close()
			b.Close()
			close(done)
		})
	}
	go func() { io.Copy(a, b); stop() }()
	go func() { io.Copy(b, a); stop() }()
	<-done
}
