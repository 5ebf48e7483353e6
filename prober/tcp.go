package prober

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
)

// tcpHandler is a tcpSocket probe: a connection made within the timeout is
// a success, closed at once.
type tcpHandler struct {
	host string // tcpSocket.host; the pod IP when empty
	port string
	err  error
}

func newTCPHandler(s *v1.TCPSocketAction, c *v1.Container) *tcpHandler {
	h := &tcpHandler{host: s.Host}
	port, err := resolvePort(s.Port, c)
	if err != nil {
		h.err = err
		return h
	}
	h.port = strconv.Itoa(port)
	return h
}

func (h *tcpHandler) run(ctx context.Context, t target, timeout time.Duration) outcome {
	if h.err != nil {
		return outcome{verdict: errored, err: h.err}
	}
	host := h.host
	if host == "" {
		host = t.ip
	}
	deadline := time.Now().Add(timeout)
	address := net.JoinHostPort(host, h.port)
	if ap, err := netip.ParseAddrPort(address); ownSockets && err == nil && ap.Addr().Zone() == "" {
		if err := connectSocket(ctx, ap, deadline); err != nil {
			return outcome{verdict: failed, output: err.Error()}
		}
		return outcome{verdict: succeeded}
	}
	d := probeDialer
	d.Deadline = deadline
	conn, err := d.DialContext(ctx, "tcp", address)
	if err != nil {
		return outcome{verdict: failed, output: err.Error()}
	}
	conn.Close()
	return outcome{verdict: succeeded}
}
