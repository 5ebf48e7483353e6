package cgroupfs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// systemdConn is what the systemd tree uses of a connection to systemd's
// D-Bus API: go-systemd's *dbus.Conn, a fake in tests. A job's result
// ("done", "failed", "canceled", ...) arrives on ch once systemd finishes
// it; ch must have room for it.
type systemdConn interface {
	StartTransientUnitContext(ctx context.Context, name, mode string, props []sddbus.Property, ch chan<- string) (int, error)
	StartUnitContext(ctx context.Context, name, mode string, ch chan<- string) (int, error)
	StopUnitContext(ctx context.Context, name, mode string, ch chan<- string) (int, error)
	SetUnitPropertiesContext(ctx context.Context, name string, runtime bool, props ...sddbus.Property) error
	ResetFailedUnitContext(ctx context.Context, name string) error
	Connected() bool
	Close()
}

// dialSystemd connects to systemd: through the system bus, or, as root
// where no bus daemon runs, systemd's private socket. The connection
// lives as long as the context it is made with (godbus closes it when
// that ends), so it gets none of the caller's: it serves every later call.
func dialSystemd(context.Context) (systemdConn, error) {
	c, err := sddbus.NewWithContext(context.Background())
	if err != nil {
		return nil, err
	}
	return c, nil
}

var systemdConnects = metrics.NewCounter(`podline_cgroup_systemd_connects_total`)

// Names of the errors systemd answers that the tree handles.
const (
	dbusUnitExists = "org.freedesktop.systemd1.UnitExists"
	dbusNoSuchUnit = "org.freedesktop.systemd1.NoSuchUnit"
)

// isDBusError reports whether err is the D-Bus error reply name.
func isDBusError(err error, name string) bool {
	var e dbus.Error
	if errors.As(err, &e) {
		return e.Name == name
	}
	var pe *dbus.Error
	return errors.As(err, &pe) && pe.Name == name
}

// errConnLost: the connection broke while a job ran, so its result will
// never arrive.
var errConnLost = errors.New("connection to systemd lost while waiting for a job")

// connBroken reports whether err means the connection is gone (systemd
// re-executed, the bus restarted) rather than systemd refusing the call.
func connBroken(err error) bool {
	return errors.Is(err, dbus.ErrClosed) || errors.Is(err, errConnLost)
}

// systemdBus holds the process's one connection to systemd, opened at
// first use and opened again once a call finds it broken. A connection
// costs two sockets and two authentications: one per call would cost
// seconds at 10,000 pods. go-systemd's connection serves concurrent calls.
type systemdBus struct {
	dial func(context.Context) (systemdConn, error)

	mu   sync.Mutex
	conn systemdConn
}

func newSystemdBus(dial func(context.Context) (systemdConn, error)) *systemdBus {
	return &systemdBus{dial: dial}
}

// get returns the open connection, or opens one.
func (b *systemdBus) get(ctx context.Context) (systemdConn, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn != nil && b.conn.Connected() {
		return b.conn, nil
	}
	if b.conn != nil {
		b.conn.Close()
		b.conn = nil
	}
	c, err := b.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect to systemd: %w", err)
	}
	systemdConnects.Inc()
	b.conn = c
	return c, nil
}

// drop closes c if it is still the connection held: another caller may
// have replaced it already.
func (b *systemdBus) drop(c systemdConn) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn == c {
		b.conn.Close()
		b.conn = nil
	}
}

// call runs op on the connection and, if op found it broken, once more on
// a new one. op must be safe to repeat: systemd may have done the first
// attempt's work.
func (b *systemdBus) call(ctx context.Context, op func(systemdConn) error) error {
	for attempt := 0; ; attempt++ {
		c, err := b.get(ctx)
		if err != nil {
			return err
		}
		err = op(c)
		if err == nil || !connBroken(err) {
			return err
		}
		b.drop(c)
		if attempt == 1 || ctx.Err() != nil {
			return err
		}
	}
}

// close closes the connection held, if any.
func (b *systemdBus) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conn != nil {
		b.conn.Close()
		b.conn = nil
	}
}

// waitJob waits for a job's result. Every check it looks whether c still
// stands: a result lost with its connection would otherwise hold the
// caller until ctx ends.
func waitJob(ctx context.Context, c systemdConn, ch <-chan string, check time.Duration) (string, error) {
	tick := time.NewTicker(check)
	defer tick.Stop()
	for {
		select {
		case r := <-ch:
			return r, nil
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for systemd: %w", ctx.Err())
		case <-tick.C:
			if !c.Connected() {
				return "", errConnLost
			}
		}
	}
}
