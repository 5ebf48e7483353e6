package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// oomPoller waits on the v1 memory OOM eventfds of all watched cgroups
// with one epoll instance. The epoll fd itself sits in Go's netpoller, so
// the serving goroutine parks without holding a thread in epoll_wait.
//
// Each cgroup costs one eventfd. The kernel (memcg_write_event_control)
// keeps only a reference to the eventfd, so the memory.oom_control and
// cgroup.event_control fds are closed right after the registration; the
// eventfd still fires on OOM. Closing the eventfd unregisters the event.
type oomPoller struct {
	epfd int
	file *os.File // owns epfd
	raw  syscall.RawConn
	keys atomic.Uint64
}

func newOOMPoller() (*oomPoller, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("epoll nonblock: %w", err)
	}
	p := &oomPoller{epfd: epfd, file: os.NewFile(uintptr(epfd), "cgroup-oom-epoll")}
	// Deadlines work only on a file the netpoller took: without them serve
	// could not be interrupted.
	if err := p.file.SetReadDeadline(time.Time{}); err != nil {
		p.file.Close()
		return nil, fmt.Errorf("epoll fd not pollable: %w", err)
	}
	if p.raw, err = p.file.SyscallConn(); err != nil {
		p.file.Close()
		return nil, err
	}
	return p, nil
}

// register arms an OOM eventfd on a v1 memory cgroup. The key identifies
// it in serve's callback; keys are never reused, unlike fd numbers.
func (p *oomPoller) register(memDir string) (efd int, key uint64, err error) {
	efd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return -1, 0, fmt.Errorf("eventfd: %w", err)
	}
	defer func() {
		if err != nil {
			unix.Close(efd)
		}
	}()
	ctlPath := filepath.Join(memDir, "memory.oom_control")
	ctl, err := unix.Open(ctlPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, 0, &fs.PathError{Op: "open", Path: ctlPath, Err: err}
	}
	defer unix.Close(ctl)
	evPath := filepath.Join(memDir, "cgroup.event_control")
	ec, err := unix.Open(evPath, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, 0, &fs.PathError{Op: "open", Path: evPath, Err: err}
	}
	defer unix.Close(ec)
	if _, err := unix.Write(ec, []byte(strconv.Itoa(efd)+" "+strconv.Itoa(ctl))); err != nil {
		return -1, 0, &fs.PathError{Op: "write", Path: evPath, Err: err}
	}
	key = p.keys.Add(1)
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(uint32(key)), Pad: int32(uint32(key >> 32))}
	if err := unix.EpollCtl(p.epfd, unix.EPOLL_CTL_ADD, efd, &ev); err != nil {
		return -1, 0, fmt.Errorf("epoll_ctl add: %w", err)
	}
	return efd, key, nil
}

// release unregisters and closes an eventfd; closing it also drops the
// kernel's OOM registration.
func (p *oomPoller) release(efd int) {
	unix.EpollCtl(p.epfd, unix.EPOLL_CTL_DEL, efd, nil)
	unix.Close(efd)
}

// serve calls on with the keys of fired eventfds until interrupt or close.
// on must drain each eventfd it still knows: they are level-triggered.
func (p *oomPoller) serve(on func(keys []uint64)) error {
	events := make([]unix.EpollEvent, 128)
	keys := make([]uint64, 0, len(events))
	for {
		var nev int
		var werr error
		err := p.raw.Read(func(fd uintptr) bool {
			for {
				nev, werr = unix.EpollWait(int(fd), events, 0)
				if werr != unix.EINTR {
					return nev > 0 || werr != nil
				}
			}
		})
		if err != nil {
			return err
		}
		if werr != nil {
			return fmt.Errorf("epoll_wait: %w", werr)
		}
		keys = keys[:0]
		for _, ev := range events[:nev] {
			keys = append(keys, uint64(uint32(ev.Fd))|uint64(uint32(ev.Pad))<<32)
		}
		on(keys)
	}
}

// interrupt makes serve return; resume lets a later serve wait again.
func (p *oomPoller) interrupt() { p.file.SetReadDeadline(time.Unix(1, 0)) }
func (p *oomPoller) resume()    { p.file.SetReadDeadline(time.Time{}) }
func (p *oomPoller) close() error {
	return p.file.Close()
}

// onOOMEvents runs on the epoll goroutine.
func (n *Notifier) onOOMEvents(keys []uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := time.Now()
	for _, key := range keys {
		w := n.byOOM[key]
		if w == nil {
			continue // released after epoll_wait returned it
		}
		var buf [8]byte
		unix.Read(w.efd, buf[:])
		if !n.checkOOMLocked(w, now) && w.efd >= 0 {
			// The eventfd fires when the OOM starts, before the victim is
			// chosen; the oom_kill counter may grow a little later, or
			// never if reclaim succeeded.
			w.recheckStep, w.oomFired = 0, now
			n.armRecheckLocked(w)
		}
	}
}

// After an eventfd fired with the counter unchanged, oom_kill is read
// again after 1, 2, 4, ... ms, up to ~2 s in all: the kill was measured
// here 1–7 ms after the eventfd, and a doubling delay keeps the
// notification within about twice that.
const oomRechecks = 11

func (n *Notifier) armRecheckLocked(w *watched) {
	d := time.Millisecond << w.recheckStep
	if w.recheck == nil {
		w.recheck = time.AfterFunc(d, func() { n.recheckOOM(w) })
		return
	}
	w.recheck.Reset(d)
}

func (n *Notifier) recheckOOM(w *watched) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.byID[w.id] != w || w.efd < 0 {
		return // unwatched or removed meanwhile
	}
	if n.checkOOMLocked(w, time.Now()) {
		n.log.Debug("oom_kill grew after the OOM eventfd fired", "cgroup", w.dir, "after", time.Since(w.oomFired))
		return
	}
	if w.recheckStep++; w.recheckStep < oomRechecks {
		n.armRecheckLocked(w)
	}
}

// checkOOMLocked reads the oom_kill counter and queues an OOMKill when it
// grew. A v1 memory cgroup that is gone (its removal also fires the
// eventfd) releases the eventfd and reports nothing.
//
// The kernel counts a kill in the cgroup whose limit was hit: a kill
// forced by a pod-level limit grows the pod cgroup's counter, not the
// container's (its eventfd fires, as for every descendant, but the
// rechecks find nothing), so it is not reported here.
func (n *Notifier) checkOOMLocked(w *watched, now time.Time) (grew bool) {
	kills, err := n.readKills(w)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENODEV):
		if w.efd >= 0 {
			n.releaseOOMLocked(w)
		}
		return false
	case err != nil:
		n.log.Warn("read cgroup oom_kill counter", "cgroup", w.dir, "err", err)
		return false
	case kills > w.kills:
		w.kills = kills
		if w.recheck != nil {
			w.recheck.Stop()
		}
		n.queueLocked(OOMKill, w, now)
		return true
	}
	return false
}

func (n *Notifier) releaseOOMLocked(w *watched) {
	if w.recheck != nil {
		w.recheck.Stop()
	}
	if w.efd < 0 {
		return
	}
	delete(n.byOOM, w.oomKey)
	n.oom.release(w.efd)
	w.efd = -1
}
