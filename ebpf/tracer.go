package ebpf

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	cebpf "github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

const kernelBTF = "/sys/kernel/btf/vmlinux"

// cgroup2Hierarchy is the default hierarchy's id (the "0::" line of
// /proc/self/cgroup): the hierarchy of the ids Watch takes.
const cgroup2Hierarchy = 0

// Tracer owns the loaded programs, their links, the watched-cgroup map and
// the ring buffer reader. Watch, Unwatch and Dropped may be called from any
// goroutine; Run from one at a time.
type Tracer struct {
	log   *slog.Logger
	objs  eventsObjects
	links []link.Link
	rd    *ringbuf.Reader

	// Held by Run while it reads; Close takes it to wait for Run to return
	// before it closes the maps Run uses.
	running   sync.Mutex
	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error

	reported atomic.Uint64 // drops already added to the metric
	final    uint64        // drop count at Close, read once closed is set
	lost     chan struct{} // see Lost
}

// Load removes the memlock rlimit, loads the programs and attaches them. Any
// failure wraps ErrUnsupported and says why. A nil log discards.
func Load(log *slog.Logger) (*Tracer, error) {
	return load(log, cgroup2Hierarchy)
}

// load takes the hierarchy the emptied filter accepts, so tests can aim it
// at a v1 hierarchy and prove the filter works.
func load(log *slog.Logger, hierarchy int32) (_ *Tracer, retErr error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if _, err := os.Stat(kernelBTF); err != nil {
		return nil, fmt.Errorf("%w: the kernel has no BTF (%w): the programs are CO-RE and attach to BTF tracepoints (CONFIG_DEBUG_INFO_BTF)", ErrUnsupported, err)
	}
	// A no-op on kernels that charge BPF memory to the cgroup (5.11+).
	if err := rlimit.RemoveMemlock(); err != nil {
		return nil, fmt.Errorf("%w: remove the memlock rlimit: %w (podline needs CAP_SYS_RESOURCE on kernels before 5.11)", ErrUnsupported, err)
	}
	spec, err := loadEvents()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	if err := spec.Variables[eventsVarWatchedHierarchy].Set(hierarchy); err != nil {
		return nil, fmt.Errorf("BUG: set watched_hierarchy: %w", err)
	}

	t := &Tracer{log: log, lost: make(chan struct{}, 1)}
	if err := spec.LoadAndAssign(&t.objs, nil); err != nil {
		return nil, unsupported("load", err)
	}
	defer func() {
		if retErr != nil {
			t.closeAll()
		}
	}()
	for _, p := range []*cebpf.Program{t.objs.OnExit, t.objs.OnOomVictim, t.objs.OnPopulated} {
		l, err := link.AttachTracing(link.TracingOptions{Program: p, AttachType: cebpf.AttachTraceRawTp})
		if err != nil {
			return nil, unsupported("attach "+p.String(), err)
		}
		t.links = append(t.links, l)
	}
	if t.rd, err = ringbuf.NewReader(t.objs.Events); err != nil {
		return nil, unsupported("open ring buffer", err)
	}
	log.Info("ebpf events attached", "programs", len(t.links), "ring_buffer_bytes", t.rd.BufferSize())
	return t, nil
}

// Watch makes the programs report exits and emptying of the cgroup with this
// id (see CgroupID). Watching an id twice is harmless.
func (t *Tracer) Watch(cgroupID uint64) error {
	if err := t.objs.Watched.Update(cgroupID, uint8(1), cebpf.UpdateAny); err != nil {
		if errors.Is(err, unix.E2BIG) {
			return fmt.Errorf("watch cgroup %d: all %d slots of the watched map are in use: %w", cgroupID, t.objs.Watched.MaxEntries(), err)
		}
		return fmt.Errorf("watch cgroup %d: %w", cgroupID, err)
	}
	return nil
}

// Unwatch stops reports for the cgroup. Unwatching an unknown id is not an
// error: cgroups are unwatched on every removal path.
func (t *Tracer) Unwatch(cgroupID uint64) error {
	if err := t.objs.Watched.Delete(cgroupID); err != nil && !errors.Is(err, cebpf.ErrKeyNotExist) {
		return fmt.Errorf("unwatch cgroup %d: %w", cgroupID, err)
	}
	return nil
}

// Dropped returns how many events the kernel lost because the ring buffer
// was full, since Load.
func (t *Tracer) Dropped() uint64 {
	if t.closed.Load() {
		return t.final
	}
	var perCPU []uint64
	if err := t.objs.Dropped.Lookup(uint32(0), &perCPU); err != nil {
		t.log.Warn("read ebpf drop counter", "err", err)
		return t.reported.Load()
	}
	var n uint64
	for _, c := range perCPU {
		n += c
	}
	return n
}

// Lost receives once after Run found that the kernel dropped events;
// drops found before the consumer took the last signal fold into it, so a
// sustained overrun costs the consumer one signal at a time. A dropped
// event may be the only report of a container's exit: the consumer relists
// to learn what it missed.
func (t *Tracer) Lost() <-chan struct{} { return t.lost }

// Close detaches the programs and frees the maps. It interrupts Run and
// waits for it to return, so out must not call Close.
func (t *Tracer) Close() error {
	t.closeOnce.Do(func() {
		t.final = t.Dropped()
		t.closed.Store(true)
		var errs []error
		if t.rd != nil {
			errs = append(errs, t.rd.Close())
		}
		t.running.Lock()
		defer t.running.Unlock()
		errs = append(errs, t.closeAll())
		t.closeErr = errors.Join(errs...)
	})
	return t.closeErr
}

func (t *Tracer) closeAll() error {
	var errs []error
	for _, l := range t.links {
		errs = append(errs, l.Close())
	}
	if t.rd != nil {
		errs = append(errs, t.rd.Close())
	}
	errs = append(errs, t.objs.Close())
	return errors.Join(errs...)
}
