package cgroupfs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// fakeSystemd stands in for systemd behind its D-Bus API: it keeps the
// loaded units, makes a started slice's cgroup directory where systemd
// places it (under a plain directory standing in for the cgroup2 mount),
// removes it when the slice stops, answers jobs on their channels and
// records every call.
type fakeSystemd struct {
	t     *testing.T
	mount string

	mu    sync.Mutex
	units map[string]bool
	calls []string
	dials int
	// dialErr fails every dial.
	dialErr error
	// results queues job results per unit, taken one per job; "done"
	// when none is queued. jobNever delivers none; jobLost delivers none
	// and breaks the connection.
	results map[string][]string
	// fail queues errors per operation ("start", "start-existing",
	// "stop", "set", "reset"), taken one per call; dbus.ErrClosed also
	// breaks the connection.
	fail map[string][]error
	// keepDirs: stopping a slice leaves its directory.
	keepDirs bool
	conn     *fakeConn
}

const (
	jobNever = "never"
	jobLost  = "lost"
)

func newFakeSystemd(t *testing.T, mount string) *fakeSystemd {
	return &fakeSystemd{t: t, mount: mount, units: map[string]bool{}, results: map[string][]string{}, fail: map[string][]error{}}
}

func (sd *fakeSystemd) dial(context.Context) (systemdConn, error) {
	sd.mu.Lock()
	defer sd.mu.Unlock()
	sd.dials++
	if sd.dialErr != nil {
		return nil, sd.dialErr
	}
	sd.conn = &fakeConn{sd: sd}
	return sd.conn, nil
}

// Calls returns the calls so far and forgets them.
func (sd *fakeSystemd) Calls() []string {
	sd.mu.Lock()
	defer sd.mu.Unlock()
	c := sd.calls
	sd.calls = nil
	return c
}

func (sd *fakeSystemd) Dials() int {
	sd.mu.Lock()
	defer sd.mu.Unlock()
	return sd.dials
}

// breakConn breaks the current connection, as a restart of systemd does.
func (sd *fakeSystemd) breakConn() {
	sd.mu.Lock()
	defer sd.mu.Unlock()
	if sd.conn != nil {
		sd.conn.broken = true
	}
}

func (sd *fakeSystemd) dir(unit string) string {
	p, err := expandSlice(unit)
	if err != nil {
		sd.t.Errorf("fake systemd: %v", err)
	}
	return filepath.Join(sd.mount, p)
}

type fakeConn struct {
	sd     *fakeSystemd
	broken bool // guarded by sd.mu
	closed bool
}

// begin records a call and says how it fails, with sd.mu held until end.
func (c *fakeConn) begin(op, unit string, props []sddbus.Property) error {
	c.sd.mu.Lock()
	c.sd.calls = append(c.sd.calls, strings.TrimSpace(op+" "+unit+" "+propsString(props)))
	if c.broken || c.closed {
		return dbus.ErrClosed
	}
	if q := c.sd.fail[op]; len(q) > 0 {
		c.sd.fail[op] = q[1:]
		if q[0] == dbus.ErrClosed {
			c.broken = true
		}
		return q[0]
	}
	return nil
}

func (c *fakeConn) end() { c.sd.mu.Unlock() }

// job answers a job of unit on ch; sd.mu is held.
func (c *fakeConn) job(unit string, ch chan<- string) {
	result := "done"
	if q := c.sd.results[unit]; len(q) > 0 {
		result, c.sd.results[unit] = q[0], q[1:]
	}
	switch result {
	case jobNever:
	case jobLost:
		c.broken = true
	default:
		ch <- result
	}
}

func (c *fakeConn) StartTransientUnitContext(_ context.Context, name, mode string, props []sddbus.Property, ch chan<- string) (int, error) {
	defer c.end()
	if err := c.begin("start", name, props); err != nil {
		return 0, err
	}
	if mode != "replace" {
		c.sd.t.Errorf("start %s: mode %q", name, mode)
	}
	if c.sd.units[name] {
		return 0, dbus.Error{Name: dbusUnitExists, Body: []any{"Unit " + name + " already exists."}}
	}
	c.sd.units[name] = true
	dir := c.sd.dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		c.sd.t.Error(err)
	}
	// Accounting on makes systemd enable those controllers in the parent.
	if sc := filepath.Join(filepath.Dir(dir), "cgroup.subtree_control"); !fileExists(sc) {
		os.WriteFile(sc, []byte("cpu io memory pids\n"), 0o644)
	}
	c.job(name, ch)
	return 1, nil
}

func (c *fakeConn) StartUnitContext(_ context.Context, name, mode string, ch chan<- string) (int, error) {
	defer c.end()
	if err := c.begin("start-existing", name, nil); err != nil {
		return 0, err
	}
	if !c.sd.units[name] {
		return 0, dbus.Error{Name: dbusNoSuchUnit}
	}
	c.job(name, ch)
	return 2, nil
}

func (c *fakeConn) StopUnitContext(_ context.Context, name, mode string, ch chan<- string) (int, error) {
	defer c.end()
	if err := c.begin("stop", name, nil); err != nil {
		return 0, err
	}
	if !c.sd.units[name] {
		return 0, dbus.Error{Name: dbusNoSuchUnit, Body: []any{"Unit " + name + " not loaded."}}
	}
	delete(c.sd.units, name)
	if !c.sd.keepDirs {
		// The cgroup's files vanish with it.
		if err := os.RemoveAll(c.sd.dir(name)); err != nil {
			c.sd.t.Error(err)
		}
	}
	c.job(name, ch)
	return 3, nil
}

func (c *fakeConn) SetUnitPropertiesContext(_ context.Context, name string, runtime bool, props ...sddbus.Property) error {
	defer c.end()
	if err := c.begin("set", name, props); err != nil {
		return err
	}
	if !runtime {
		c.sd.t.Errorf("set %s: not runtime-only", name)
	}
	if !c.sd.units[name] {
		return dbus.Error{Name: dbusNoSuchUnit}
	}
	return nil
}

func (c *fakeConn) ResetFailedUnitContext(_ context.Context, name string) error {
	defer c.end()
	return c.begin("reset", name, nil)
}

func (c *fakeConn) Connected() bool {
	c.sd.mu.Lock()
	defer c.sd.mu.Unlock()
	return !c.broken && !c.closed
}

func (c *fakeConn) Close() {
	c.sd.mu.Lock()
	defer c.sd.mu.Unlock()
	c.closed = true
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// propsString renders properties as Name=value, for comparing.
func propsString(props []sddbus.Property) string {
	parts := make([]string, len(props))
	for i, p := range props {
		v := p.Value.Value()
		switch x := v.(type) {
		case uint64:
			if x == systemdInfinity {
				v = "infinity"
			}
		case []string:
			v = strings.Join(x, ",")
		case string:
			v = fmt.Sprintf("%q", x)
		}
		parts[i] = fmt.Sprintf("%s=%v", p.Name, v)
	}
	return strings.Join(parts, " ")
}

// newSystemdTree is a Tree with the systemd driver on a fake systemd and a
// plain directory standing in for the cgroup2 mount, whose root enables
// rootEnables.
func newSystemdTree(t *testing.T, root string) (*Tree, *fakeSystemd, string) {
	t.Helper()
	mount := t.TempDir()
	if err := os.WriteFile(filepath.Join(mount, "cgroup.subtree_control"), []byte("cpuset cpu io memory hugetlb pids\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sd := newFakeSystemd(t, mount)
	be := &treeSystemd{files: &treeV2{mount: mount}, bus: newSystemdBus(sd.dial), log: testLogger(t),
		timeout: 5 * time.Second, check: 5 * time.Millisecond}
	layout := Layout{Root: root, PerQOS: true, Driver: DriverSystemd}
	return newTree(layout, testLogger(t), be, Hierarchies{mount}), sd, mount
}
