package cgroupfs

import (
	"math"
	"strings"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// systemdInfinity is how systemd's D-Bus API spells "no limit" for
// MemoryMax, TasksMax and CPUQuotaPerSecUSec.
const systemdInfinity = math.MaxUint64

func prop(name string, value any) sddbus.Property {
	return sddbus.Property{Name: name, Value: dbus.MakeVariant(value)}
}

// sliceProperties are those of a transient slice podline starts, as the
// kubelet's (through runc's libcontainer) are: ordered after nothing but
// its parent slice, which it wants (DefaultDependencies=false, Wants=),
// and accounting on, so that systemd enables the cpu, memory, io and pids
// controllers down to it.
func sliceProperties(unit, parent string) []sddbus.Property {
	return []sddbus.Property{
		sddbus.PropDescription(sliceDescription(unit)),
		sddbus.PropWants(parent),
		prop("DefaultDependencies", false),
		prop("MemoryAccounting", true),
		prop("CPUAccounting", true),
		prop("IOAccounting", true),
		prop("TasksAccounting", true),
	}
}

// sliceDescription is what systemctl shows beside a slice's name: the
// last level of the name says what it holds, its place below kubepods
// that it is podline's.
func sliceDescription(unit string) string {
	levels := strings.Split(strings.TrimSuffix(unit, sliceSuffix), "-")
	n := len(levels)
	last, up := levels[n-1], ""
	if n >= 2 {
		up = levels[n-2]
	}
	switch {
	case strings.HasPrefix(last, "pod") && (up == KubepodsName || up == burstableName || up == besteffortName):
		return "Kubernetes pod " + strings.TrimPrefix(last, "pod") + " (podline)"
	case last == KubepodsName:
		return "Kubernetes pods (podline)"
	case last == burstableName && up == KubepodsName:
		return "Kubernetes Burstable pods (podline)"
	case last == besteffortName && up == KubepodsName:
		return "Kubernetes BestEffort pods (podline)"
	}
	return "podline cgroup root " + unit
}

// resourceProperties are the unit properties for r's set fields, as
// runc's systemd driver sets them for the kubelet: CPUWeight from the
// shares, CPUQuotaPeriodUSec and CPUQuotaPerSecUSec, MemoryMax and
// TasksMax, a negative limit as infinity. systemd keeps the quota as a
// whole percent of a CPU, so the quota per second is rounded up to 10 ms:
// never less than asked. Tree writes the exact values into the cgroup
// files after them.
func resourceProperties(r Resources) []sddbus.Property {
	var props []sddbus.Property
	if r.CPUShares != nil {
		props = append(props, prop("CPUWeight", SharesToWeight(*r.CPUShares)))
	}
	period := CFSPeriodUS
	if r.CPUPeriod != nil && *r.CPUPeriod > 0 {
		period = *r.CPUPeriod
		props = append(props, prop("CPUQuotaPeriodUSec", period))
	}
	if r.CPUQuota != nil {
		props = append(props, prop("CPUQuotaPerSecUSec", quotaPerSecond(*r.CPUQuota, period)))
	}
	if r.MemoryLimit != nil {
		props = append(props, prop("MemoryMax", limitOrInfinity(*r.MemoryLimit)))
	}
	if r.PidsLimit != nil {
		props = append(props, prop("TasksMax", limitOrInfinity(*r.PidsLimit)))
	}
	return props
}

// quotaPerSecond converts a CFS quota per period (µs) into systemd's
// CPUQuotaPerSecUSec, rounded up to 10 ms; no quota (<= 0) is infinity.
func quotaPerSecond(quota int64, period uint64) uint64 {
	if quota <= 0 {
		return systemdInfinity
	}
	perSec := uint64(quota) * 1_000_000 / period
	const step = 10_000
	if perSec%step != 0 {
		perSec = (perSec/step + 1) * step
	}
	return perSec
}

func limitOrInfinity(v int64) uint64 {
	if v < 0 {
		return systemdInfinity
	}
	return uint64(v)
}
