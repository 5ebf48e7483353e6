package prober

import (
	"net"
	"syscall"
)

// probeDialer makes the connections of HTTP and TCP probes. Each lives for
// one run, so TCP keep-alive (four setsockopt calls per connection) buys
// nothing. SO_LINGER of one second is the kubelet's: a close waits at
// most that long for the peer, and a pod that never answers the FIN
// leaves no socket behind for a minute.
var probeDialer = net.Dialer{KeepAlive: -1, Control: linger}

func linger(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptLinger(int(fd), syscall.SOL_SOCKET, syscall.SO_LINGER, &syscall.Linger{Onoff: 1, Linger: 1})
	})
	if err != nil {
		return err
	}
	return serr
}
