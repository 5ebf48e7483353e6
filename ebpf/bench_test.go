package ebpf

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkExitEvent: a container-like process (pid 1 of a new pid
// namespace, in a watched cgroup) exits and its event reaches Go. ns/op is
// mostly fork and exec; kernel-to-Go-ns (median) is the event plane's own
// part: BPF program, ring buffer wakeup, read and decode.
func BenchmarkExitEvent(b *testing.B) {
	tr := loadTracer(b, cgroup2Hierarchy)
	c := collect(b, tr)
	cg, id := watchNew(b, tr)
	var lat []time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start(b, cg, true, "/bin/true").wait(b)
		r := c.expect(b, "exit", exitIn(id))
		lat = append(lat, r.at.Sub(r.Time))
		c.expect(b, "emptied", emptied(id))
	}
	b.ReportMetric(float64(median(lat)), "kernel-to-Go-ns")
}

// BenchmarkEmptiedEvent: one cgroup migration empties a watched cgroup and
// the event reaches Go; the round trip without fork and exec.
func BenchmarkEmptiedEvent(b *testing.B) {
	tr := loadTracer(b, cgroup2Hierarchy)
	c := collect(b, tr)
	a, idA := watchNew(b, tr)
	other, idB := watchNew(b, tr)
	p := start(b, a, false, "/bin/sleep", "600")
	var procs [2]*os.File
	for i, dir := range []string{other, a} {
		f, err := os.OpenFile(filepath.Join(dir, "cgroup.procs"), os.O_WRONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		procs[i] = f
	}
	pid := []byte(strconv.Itoa(int(p.pid())))
	left := [2]uint64{idA, idB}
	var lat []time.Duration
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		if _, err := procs[i%2].Write(pid); err != nil {
			b.Fatal(err)
		}
		r := c.expect(b, "emptied", emptied(left[i%2]))
		lat = append(lat, r.at.Sub(r.Time))
		i++
	}
	b.ReportMetric(float64(median(lat)), "kernel-to-Go-ns")
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[len(d)/2]
}
