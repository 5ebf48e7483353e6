package prober

import (
	"context"
	"io"
	"net"
	"net/netip"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// probeSocket is a TCP connection of one probe run on a socket of its own,
// outside Go's netpoller. Go's dial costs a dozen system calls per
// connection (socket options, epoll registration and removal,
// getsockname, getpeername, TCP_NODELAY) and a goroutine park per wait;
// a probe wants a handful: socket, connect, write, poll, read, close. At
// 1,000 HTTP probes a second on a VM, where every system call pays for
// the hypervisor, those calls were most of what a probe cost.
//
// Waits are poll(2) in the calling goroutine, bounded by the run's
// deadline and cut into slices so that a cancelled context is seen.
type probeSocket struct {
	fd       int
	addr     netip.AddrPort
	deadline time.Time
	ctx      context.Context
	// waited is whether the socket was polled for input yet: the first
	// read waits before reading, since an answer cannot be there the
	// moment the request is sent.
	waited bool
}

// pollSlice bounds one poll, so that a run whose context ends mid-wait
// ends within it.
const pollSlice = 250 * time.Millisecond

// dialSocket connects to addr and sends req, within deadline. The
// connection is usually up when connect returns (a pod's address is on
// the node), so the request goes out at once and waiting for the
// connection happens only when it is not.
func dialSocket(ctx context.Context, addr netip.AddrPort, deadline time.Time, req []byte) (*probeSocket, error) {
	s, err := openSocket(ctx, addr, deadline)
	if err != nil {
		return nil, err
	}
	if err := s.send(req); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// connectSocket makes a connection to addr within deadline and closes it:
// a tcpSocket probe.
func connectSocket(ctx context.Context, addr netip.AddrPort, deadline time.Time) error {
	s, err := openSocket(ctx, addr, deadline)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.wait(unix.POLLOUT); err != nil {
		return dialError(addr, err)
	}
	return s.connectError()
}

// openSocket starts a connection to addr.
func openSocket(ctx context.Context, addr netip.AddrPort, deadline time.Time) (*probeSocket, error) {
	family, sa := unix.AF_INET, unix.Sockaddr(nil)
	if addr.Addr().Is4() || addr.Addr().Is4In6() {
		sa = &unix.SockaddrInet4{Port: int(addr.Port()), Addr: addr.Addr().Unmap().As4()}
	} else {
		family = unix.AF_INET6
		sa = &unix.SockaddrInet6{Port: int(addr.Port()), Addr: addr.Addr().As16()}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, dialError(addr, os.NewSyscallError("socket", err))
	}
	s := &probeSocket{fd: fd, addr: addr, deadline: deadline, ctx: ctx}
	// SO_LINGER of one second, as the kubelet's probes: a close waits at
	// most that long for the peer, and a pod that never answers the FIN
	// leaves no socket behind for a minute.
	if err := unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 1}); err != nil {
		s.Close()
		return nil, dialError(addr, os.NewSyscallError("setsockopt", err))
	}
	if err := connect(fd, sa); err != nil && err != unix.EINPROGRESS {
		s.Close()
		return nil, dialError(addr, os.NewSyscallError("connect", err))
	}
	return s, nil
}

// send writes req whole, waiting for the connection to come up if it has
// not yet.
func (s *probeSocket) send(req []byte) error {
	connected := false
	for len(req) > 0 {
		n, err := unix.Write(s.fd, req)
		switch {
		case err == nil:
			req = req[n:]
			connected = true
			continue
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN || err == unix.ENOTCONN:
			if err := s.wait(unix.POLLOUT); err != nil {
				if connected {
					return err
				}
				return dialError(s.addr, err)
			}
		default:
			if !connected {
				// Nothing went out: the connection failed, and the
				// write took its error (refused, unreachable).
				return dialError(s.addr, os.NewSyscallError("connect", err))
			}
			return &net.OpError{Op: "write", Net: "tcp", Addr: net.TCPAddrFromAddrPort(s.addr), Err: os.NewSyscallError("write", err)}
		}
		if !connected {
			if cerr := s.connectError(); cerr != nil {
				return cerr
			}
		}
	}
	return nil
}

// connectError is the pending error of the connection, if it failed.
func (s *probeSocket) connectError() error {
	e, err := unix.GetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return dialError(s.addr, os.NewSyscallError("getsockopt", err))
	}
	if e != 0 {
		return dialError(s.addr, os.NewSyscallError("connect", unix.Errno(e)))
	}
	return nil
}

// Read reads what the socket has, waiting for it until the deadline.
func (s *probeSocket) Read(p []byte) (int, error) {
	for {
		if !s.waited {
			s.waited = true
			if err := s.wait(unix.POLLIN); err != nil {
				return 0, err
			}
		}
		n, err := unix.Read(s.fd, p)
		switch {
		case err == nil && n == 0 && len(p) > 0:
			return 0, io.EOF
		case err == nil:
			return n, nil
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			s.waited = false
			continue
		}
		return 0, &net.OpError{Op: "read", Net: "tcp", Addr: net.TCPAddrFromAddrPort(s.addr), Err: os.NewSyscallError("read", err)}
	}
}

// wait polls for events until they come, the deadline passes or the
// context ends.
func (s *probeSocket) wait(events int16) error {
	fds := []unix.PollFd{{Fd: int32(s.fd), Events: events}}
	for {
		if err := s.ctx.Err(); err != nil {
			return err
		}
		left := time.Until(s.deadline)
		if left <= 0 {
			return os.ErrDeadlineExceeded
		}
		ms := int(min(left, pollSlice) / time.Millisecond)
		if ms == 0 {
			ms = 1
		}
		n, err := unix.Poll(fds, ms)
		if err == unix.EINTR || n == 0 {
			continue
		}
		if err != nil {
			return os.NewSyscallError("poll", err)
		}
		// Readable, writable, or an error or hang-up the next call
		// reports.
		return nil
	}
}

// Close closes the socket.
func (s *probeSocket) Close() error {
	return unix.Close(s.fd)
}

// connect is unix.Connect retried on EINTR, which leaves the connection
// in progress: a second connect then says EALREADY.
func connect(fd int, sa unix.Sockaddr) error {
	err := unix.Connect(fd, sa)
	for err == unix.EINTR {
		err = unix.Connect(fd, sa)
		if err == unix.EALREADY {
			return unix.EINPROGRESS
		}
	}
	return err
}

// dialError words a failed connection as Go's dialer does ("dial tcp
// 10.0.0.1:80: connect: connection refused"): probe events carry it, and
// the kubelet's come from that dialer.
func dialError(addr netip.AddrPort, err error) error {
	return &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(addr), Err: err}
}
