package cgroupfs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"path/filepath"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
)

var _ systemdConn = (*sddbus.Conn)(nil)

const (
	// systemdTimeout bounds one unit operation with its job, as runc's
	// systemd driver bounds it.
	systemdTimeout = 30 * time.Second
	// systemdConnCheck is how often a wait for a job looks whether the
	// connection still stands.
	systemdConnCheck = time.Second
)

// treeSystemd keeps the tree on a unified cgroup2 host whose cgroups
// systemd manages: every level is a transient slice unit started through
// systemd's D-Bus API with the kubelet's names, so containerd and runc with
// SystemdCgroup = true put containers in them as scopes and systemctl
// shows the pods. Limits are set on the units (systemd writes them on
// every realization of the unit) and written exactly into the cgroup
// files after them, as the cgroupfs driver writes them (files); they are
// read back from the files. A pod's slice is stopped to remove it.
type treeSystemd struct {
	files *treeV2
	bus   *systemdBus
	log   *slog.Logger
	// timeout and check are systemdTimeout and systemdConnCheck (tests
	// shorten them).
	timeout, check time.Duration
}

func newTreeSystemd(mount string, bus *systemdBus, log *slog.Logger) (*treeSystemd, error) {
	files, err := newTreeV2(mount)
	if err != nil {
		return nil, err
	}
	return &treeSystemd{files: files, bus: bus, log: log, timeout: systemdTimeout, check: systemdConnCheck}, nil
}

func (t *treeSystemd) String() string { return "systemd+v2[" + t.files.mount + "]" }

// sliceUnit is the slice unit of a cgroup dir of the layout, which must be
// systemd's placement of it.
func sliceUnit(dir string) (string, error) {
	unit := path.Base(dir)
	if placed, err := expandSlice(unit); err != nil || placed != dir {
		return "", fmt.Errorf("cgroup %s is not where systemd places a slice", dir)
	}
	return unit, nil
}

func (t *treeSystemd) context() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), t.timeout)
}

// ensureDir starts dir's slice unit, then prepares its cgroup as the v2
// backend does (ours: controllers enabled for its children).
func (t *treeSystemd) ensureDir(dir string, ours bool) (bool, error) {
	unit, err := sliceUnit(dir)
	if err != nil {
		return false, err
	}
	if err := t.startSlice(unit, parentSlice(dir)); err != nil {
		return false, err
	}
	return t.files.ensureDir(dir, ours)
}

// startSlice starts a transient slice and waits for its job. A unit that
// exists already (made by an earlier run, or an earlier attempt whose
// connection broke) is started as it is: a no-op when it is active.
func (t *treeSystemd) startSlice(unit, parent string) error {
	ctx, cancel := t.context()
	defer cancel()
	err := t.bus.call(ctx, func(c systemdConn) error {
		ch := make(chan string, 1)
		_, err := c.StartTransientUnitContext(ctx, unit, "replace", sliceProperties(unit, parent), ch)
		if isDBusError(err, dbusUnitExists) {
			ch = make(chan string, 1)
			_, err = c.StartUnitContext(ctx, unit, "replace", ch)
		}
		if err != nil {
			return err
		}
		result, err := waitJob(ctx, c, ch, t.check)
		if err != nil {
			return err
		}
		if result != "done" {
			// A failed unit stays loaded until reset; let the next
			// attempt start it afresh.
			_ = c.ResetFailedUnitContext(ctx, unit)
			return fmt.Errorf("job %s", result)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("start slice %s: %w", unit, err)
	}
	return nil
}

// write sets r on dir's unit, then writes it into the files: systemd
// rounds the cpu quota to 10 ms per second, the files get it exact.
func (t *treeSystemd) write(dir string, r Resources) error {
	unit, err := sliceUnit(dir)
	if err != nil {
		return err
	}
	if props := resourceProperties(r); len(props) > 0 {
		ctx, cancel := t.context()
		defer cancel()
		err := t.bus.call(ctx, func(c systemdConn) error {
			return c.SetUnitPropertiesContext(ctx, unit, true, props...)
		})
		if err != nil {
			return fmt.Errorf("set properties of %s: %w", unit, err)
		}
	}
	return t.files.write(dir, r)
}

func (t *treeSystemd) read(dir string) (Resources, error) { return t.files.read(dir) }

// removePod stops a pod's slice unit, which removes its cgroup; RemovePod
// removes whatever directory is left. A pod cgroup that still holds
// processes is busy, as on the cgroupfs driver, and is left alone:
// stopping the slice would kill them.
func (t *treeSystemd) removePod(dir string) error {
	unit, err := sliceUnit(dir)
	if err != nil {
		return err
	}
	if busy, err := Populated(filepath.Join(t.files.mount, dir)); err == nil && busy {
		return fmt.Errorf("stop slice %s: %w", unit, ErrBusy)
	}
	ctx, cancel := t.context()
	defer cancel()
	var result string
	err = t.bus.call(ctx, func(c systemdConn) error {
		ch := make(chan string, 1)
		if _, err := c.StopUnitContext(ctx, unit, "replace", ch); err != nil {
			if isDBusError(err, dbusNoSuchUnit) {
				result = "done" // gone already
				return nil
			}
			return err
		}
		var err error
		result, err = waitJob(ctx, c, ch, t.check)
		if err != nil {
			return err
		}
		// A unit that failed stays loaded until reset.
		if err := c.ResetFailedUnitContext(ctx, unit); err != nil && !isDBusError(err, dbusNoSuchUnit) {
			t.log.Debug("reset failed slice", "unit", unit, "err", err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("stop slice %s: %w", unit, err)
	}
	if result != "done" {
		// As runc does: go on, the directories are removed anyway.
		t.log.Warn("stopping a pod slice did not finish; removing its cgroup anyway", "unit", unit, "job", result)
	}
	return nil
}

// podRemover is a backend that must do something before a pod cgroup's
// directories are removed.
type podRemover interface {
	removePod(dir string) error
}

var _ podRemover = (*treeSystemd)(nil)

// errSystemdNeedsUnified is the refusal of the systemd driver on a host
// without the unified hierarchy.
var errSystemdNeedsUnified = errors.New("the systemd cgroup driver needs the unified cgroup hierarchy (cgroup v2)")
