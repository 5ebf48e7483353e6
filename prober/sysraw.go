package prober

import (
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The probe socket's calls that cannot block, made as raw system calls:
// without telling the Go scheduler a thread is entering the kernel.
// Through unix.Connect and friends each call marks its P as in a system
// call, and one that lasts past 20 µs (a connect on this VM does the
// whole loopback handshake inside the call) has the runtime's monitor
// hand the P to another thread, waking it, and poll every 20 µs after:
// at 1,000 probes a second that monitor was a tenth of the agent's CPU.
// The socket is non-blocking, so none of these waits; close, which
// SO_LINGER lets wait, keeps the ordinary path.

func rawSocket(family int) (int, error) {
	fd, _, errno := unix.RawSyscall(unix.SYS_SOCKET, uintptr(family), unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// lingerOneSecond is the SO_LINGER value every probe socket gets.
var lingerOneSecond = unix.Linger{Onoff: 1, Linger: 1}

func rawSetLinger(fd int) error {
	_, _, errno := unix.RawSyscall6(unix.SYS_SETSOCKOPT, uintptr(fd), unix.SOL_SOCKET, unix.SO_LINGER,
		uintptr(unsafe.Pointer(&lingerOneSecond)), unix.SizeofLinger, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// rawConnect starts a connection to addr; EINPROGRESS is the usual answer.
func rawConnect(fd int, addr netip.AddrPort) error {
	port := addr.Port()
	port = port<<8 | port>>8 // network byte order
	var (
		ptr unsafe.Pointer
		n   uintptr
	)
	if a := addr.Addr().Unmap(); a.Is4() {
		sa := &unix.RawSockaddrInet4{Family: unix.AF_INET, Port: port, Addr: a.As4()}
		ptr, n = unsafe.Pointer(sa), unix.SizeofSockaddrInet4
	} else {
		sa := &unix.RawSockaddrInet6{Family: unix.AF_INET6, Port: port, Addr: a.As16()}
		ptr, n = unsafe.Pointer(sa), unix.SizeofSockaddrInet6
	}
	for {
		_, _, errno := unix.RawSyscall(unix.SYS_CONNECT, uintptr(fd), uintptr(ptr), n)
		switch errno {
		case 0:
			return nil
		case unix.EINTR:
			// The connection goes on; a second connect says so.
			continue
		case unix.EALREADY:
			return unix.EINPROGRESS
		}
		return errno
	}
}

func rawWrite(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, errno := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func rawRead(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
