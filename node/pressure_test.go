package node

import (
	"testing"
	"time"

	"github.com/podline/podline/machine"
)

func TestPressure(t *testing.T) {
	hard, err := ParseThresholds(DefaultEvictionHard + ",pid.available<1000")
	if err != nil {
		t.Fatal(err)
	}
	const gi = 1 << 30
	f := func(obs Observations, want Pressures) {
		t.Helper()
		if got := Pressure(hard, obs); got != want {
			t.Fatalf("%v: %+v, want %+v", obs, got, want)
		}
	}
	healthy := Observations{
		"memory.available":  {Available: 2 * gi, Capacity: 8 * gi},
		"nodefs.available":  {Available: 50 * gi, Capacity: 100 * gi},
		"nodefs.inodesFree": {Available: 900, Capacity: 1000},
		"imagefs.available": {Available: 50 * gi, Capacity: 100 * gi},
		"pid.available":     {Available: 30000, Capacity: 32768},
	}
	with := func(signal string, o Observation) Observations {
		out := Observations{}
		for k, v := range healthy {
			out[k] = v
		}
		out[signal] = o
		return out
	}
	f(nil, Pressures{})
	f(healthy, Pressures{})
	f(with("memory.available", Observation{Available: 50 << 20, Capacity: 8 * gi}), Pressures{Memory: true})
	// The threshold itself is not under it: less than the amount is.
	f(with("memory.available", Observation{Available: 100 << 20, Capacity: 8 * gi}), Pressures{})
	f(with("nodefs.available", Observation{Available: 9 * gi, Capacity: 100 * gi}), Pressures{Disk: true})
	f(with("nodefs.available", Observation{Available: 11 * gi, Capacity: 100 * gi}), Pressures{})
	f(with("imagefs.available", Observation{Available: 14 * gi, Capacity: 100 * gi}), Pressures{Disk: true})
	f(with("nodefs.inodesFree", Observation{Available: 40, Capacity: 1000}), Pressures{Disk: true})
	f(with("pid.available", Observation{Available: 999, Capacity: 32768}), Pressures{PID: true})
	// A signal without a threshold presses nothing.
	f(with("imagefs.inodesFree", Observation{Available: 0, Capacity: 1000}), Pressures{})
}

func TestMachineObservations(t *testing.T) {
	hard, _ := ParseThresholds(DefaultEvictionHard)
	mem := machine.Memory{Total: 8 << 30, WorkingSet: 8<<30 - 64<<20, Available: 4 << 30}
	fs := machine.Fs{Capacity: 100 << 30, Available: 50 << 30, Inodes: 1000, InodesFree: 900}
	obs := MachineObservations(mem, fs)
	if o := obs["memory.available"]; o.Available != 64<<20 || o.Capacity != 8<<30 {
		t.Fatalf("memory %+v", o)
	}
	// 64Mi left of the working set is under 100Mi, whatever MemAvailable says.
	if p := Pressure(hard, obs); p != (Pressures{Memory: true}) {
		t.Fatalf("%+v", p)
	}
	fs.InodesFree = 10
	if p := Pressure(hard, MachineObservations(machine.Memory{Total: 8 << 30}, fs)); p != (Pressures{Disk: true}) {
		t.Fatalf("%+v", p)
	}
}

func TestPressureHold(t *testing.T) {
	h := PressureHold{Period: 5 * time.Minute}
	t0 := time.Unix(1_000_000, 0)
	f := func(at time.Duration, in, want Pressures) {
		t.Helper()
		if got := h.Observe(t0.Add(at), in); got != want {
			t.Fatalf("at %v with %+v: %+v, want %+v", at, in, got, want)
		}
	}
	f(0, Pressures{}, Pressures{})
	f(time.Minute, Pressures{Memory: true}, Pressures{Memory: true})
	f(2*time.Minute, Pressures{Disk: true}, Pressures{Memory: true, Disk: true})
	f(5*time.Minute, Pressures{}, Pressures{Memory: true, Disk: true})
	f(6*time.Minute, Pressures{}, Pressures{Disk: true}) // memory last seen 5m ago
	f(7*time.Minute, Pressures{}, Pressures{})
	f(8*time.Minute, Pressures{PID: true}, Pressures{PID: true})
}
