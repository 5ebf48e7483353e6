package cgroupfs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

func TestResourceProperties(t *testing.T) {
	u := func(v uint64) *uint64 { return &v }
	i := func(v int64) *int64 { return &v }
	f := func(r Resources, want string) {
		t.Helper()
		if got := propsString(resourceProperties(r)); got != want {
			t.Errorf("resourceProperties(%s) =\n  %s\nwant\n  %s", r, got, want)
		}
	}
	f(Resources{}, "")
	f(Resources{CPUShares: u(2)}, "CPUWeight=1")
	f(Resources{CPUShares: u(1024)}, "CPUWeight=39")
	f(Resources{CPUShares: u(262144)}, "CPUWeight=10000")
	// The kubelet's pod limits: quota with its period.
	f(Resources{CPUQuota: i(50000), CPUPeriod: u(100000)}, "CPUQuotaPeriodUSec=100000 CPUQuotaPerSecUSec=500000")
	f(Resources{CPUQuota: i(1000), CPUPeriod: u(100000)}, "CPUQuotaPeriodUSec=100000 CPUQuotaPerSecUSec=10000")
	f(Resources{CPUQuota: i(33300), CPUPeriod: u(100000)}, "CPUQuotaPeriodUSec=100000 CPUQuotaPerSecUSec=340000")
	f(Resources{CPUQuota: i(5000), CPUPeriod: u(10000)}, "CPUQuotaPeriodUSec=10000 CPUQuotaPerSecUSec=500000")
	// A quota alone is per the default period; none is infinity.
	f(Resources{CPUQuota: i(20000)}, "CPUQuotaPerSecUSec=200000")
	f(Resources{CPUQuota: i(-1), CPUPeriod: u(100000)}, "CPUQuotaPeriodUSec=100000 CPUQuotaPerSecUSec=infinity")
	f(Resources{CPUPeriod: u(50000)}, "CPUQuotaPeriodUSec=50000")
	f(Resources{MemoryLimit: i(128 << 20)}, "MemoryMax=134217728")
	f(Resources{MemoryLimit: i(-1)}, "MemoryMax=infinity")
	f(Resources{PidsLimit: i(1024)}, "TasksMax=1024")
	f(Resources{PidsLimit: i(-1)}, "TasksMax=infinity")
	f(Resources{CPUShares: u(102), CPUQuota: i(25000), CPUPeriod: u(100000), MemoryLimit: i(1 << 30), PidsLimit: i(100)},
		"CPUWeight=4 CPUQuotaPeriodUSec=100000 CPUQuotaPerSecUSec=250000 MemoryMax=1073741824 TasksMax=100")
}

func TestQuotaPerSecond(t *testing.T) {
	for _, c := range []struct {
		quota  int64
		period uint64
		want   uint64
	}{
		{100000, 100000, 1000000},
		{1, 100000, 10000},
		{10001, 100000, 110000},
		{250000, 100000, 2500000},
		{0, 100000, systemdInfinity},
		{-1, 100000, systemdInfinity},
		{3333, 10000, 340000},
	} {
		if got := quotaPerSecond(c.quota, c.period); got != c.want {
			t.Errorf("quotaPerSecond(%d, %d) = %d, want %d", c.quota, c.period, got, c.want)
		}
	}
}

func TestSliceProperties(t *testing.T) {
	got := propsString(sliceProperties("kubepods-burstable-pod1_2.slice", "kubepods-burstable.slice"))
	want := `Description="Kubernetes pod 1_2 (podline)" Wants=kubepods-burstable.slice DefaultDependencies=false ` +
		"MemoryAccounting=true CPUAccounting=true IOAccounting=true TasksAccounting=true"
	if got != want {
		t.Errorf("sliceProperties =\n  %s\nwant\n  %s", got, want)
	}
	for unit, want := range map[string]string{
		"kubepods.slice":                    "Kubernetes pods (podline)",
		"r-kubepods-burstable.slice":        "Kubernetes Burstable pods (podline)",
		"kubepods-besteffort.slice":         "Kubernetes BestEffort pods (podline)",
		"kubepods-besteffort-podabc.slice":  "Kubernetes pod abc (podline)",
		"podline_e2e.slice":                 "podline cgroup root podline_e2e.slice",
		"pod.slice":                         "podline cgroup root pod.slice",
		"podline.slice":                     "podline cgroup root podline.slice",
		"a-burstable.slice":                 "podline cgroup root a-burstable.slice",
		"podline_e2e-kubepods-podx_y.slice": "Kubernetes pod x_y (podline)",
	} {
		if got := sliceDescription(unit); got != want {
			t.Errorf("sliceDescription(%q) = %q, want %q", unit, got, want)
		}
	}
}

// A refusal is systemd's answer, not a broken connection: not retried.
func TestSystemdBusRetriesBrokenOnly(t *testing.T) {
	sd := newFakeSystemd(t, t.TempDir())
	bus := newSystemdBus(sd.dial)
	defer bus.close()
	ctx := context.Background()
	calls := 0
	refused := dbus.Error{Name: "org.freedesktop.DBus.Error.AccessDenied"}
	err := bus.call(ctx, func(systemdConn) error { calls++; return refused })
	if !isDBusError(err, refused.Name) || calls != 1 || sd.Dials() != 1 {
		t.Errorf("refused: err %v, %d calls, %d dials; want it once on one connection", err, calls, sd.Dials())
	}
	calls = 0
	err = bus.call(ctx, func(systemdConn) error {
		calls++
		if calls == 1 {
			return errConnLost
		}
		return nil
	})
	if err != nil || calls != 2 || sd.Dials() != 2 {
		t.Errorf("lost: err %v, %d calls, %d dials; want a second call on a new connection", err, calls, sd.Dials())
	}
	if !isDBusError(&dbus.Error{Name: dbusNoSuchUnit}, dbusNoSuchUnit) || isDBusError(errors.New(dbusNoSuchUnit), dbusNoSuchUnit) {
		t.Error("isDBusError must know the reply by its name, as a value or a pointer, and nothing else")
	}
}

// A wait for a job ends with its result, the caller's deadline, or the
// connection going away.
func TestWaitJob(t *testing.T) {
	sd := newFakeSystemd(t, t.TempDir())
	c, _ := sd.dial(context.Background())
	ch := make(chan string, 1)
	ch <- "done"
	if r, err := waitJob(context.Background(), c, ch, time.Millisecond); r != "done" || err != nil {
		t.Errorf("waitJob = %q, %v", r, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := waitJob(ctx, c, make(chan string), time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("no result: %v, want the deadline", err)
	}
	sd.breakConn()
	if _, err := waitJob(context.Background(), c, make(chan string), time.Millisecond); !errors.Is(err, errConnLost) {
		t.Errorf("broken connection: %v, want errConnLost", err)
	}
}
