package libcost

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/machine"
	"github.com/podline/podline/stats"
)

// snapshot is n pods of one container each, every group read, each pod
// with one interface: what /metrics/cadvisor serves at n containers.
func snapshot(n int) *stats.Snapshot {
	s := &stats.Snapshot{Time: time.Unix(1764000000, 0)}
	for i := range n {
		cg := cgroupfs.Stats{
			CPUUsageNanos: uint64(i)*1e9 + 123456789, MemoryUsage: uint64(i) << 20, MemoryWorkingSet: uint64(i) << 19,
			MemoryRSS: uint64(i) << 18, MemoryLimit: 256 << 20, PageFaults: uint64(i) * 7, MajorPageFaults: uint64(i),
			Pids: 3, HasCPU: true, HasMemory: true, HasPids: true,
		}
		name := fmt.Sprintf("app-%d", i)
		if i%100 == 0 {
			name = "needs \"escaping\"\\"
		}
		s.Pods = append(s.Pods, stats.PodSample{
			Name: fmt.Sprintf("web-%d", i), Namespace: "default",
			Containers: []stats.ContainerSample{{
				Name: name, ID: fmt.Sprintf("containerd://%064x", i), Image: "registry.local/app:1.0",
				StartTime: time.Unix(1764000000+int64(i), 500e6), Cgroup: cg,
			}},
			Network: []machine.Interface{{Name: "eth0", RxBytes: uint64(i) * 1000, TxBytes: uint64(i) * 900, RxErrors: 1}},
		})
	}
	return s
}

// cadvisorFamilies is stats.WriteCadvisor's series as client_model
// families, as a replacement that encodes with expfmt would build them.
func cadvisorFamilies(s *stats.Snapshot) []*dto.MetricFamily {
	lp := func(kv ...string) []*dto.LabelPair {
		out := make([]*dto.LabelPair, 0, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			out = append(out, &dto.LabelPair{Name: proto.String(kv[i]), Value: proto.String(kv[i+1])})
		}
		return out
	}
	type pick func(c *stats.ContainerSample) (float64, bool)
	fam := func(name, help string, counter bool) *dto.MetricFamily {
		t := dto.MetricType_GAUGE
		if counter {
			t = dto.MetricType_COUNTER
		}
		return &dto.MetricFamily{Name: proto.String(name), Help: proto.String(help), Type: &t}
	}
	add := func(f *dto.MetricFamily, labels []*dto.LabelPair, v float64) {
		m := &dto.Metric{Label: labels}
		if f.GetType() == dto.MetricType_COUNTER {
			m.Counter = &dto.Counter{Value: proto.Float64(v)}
		} else {
			m.Gauge = &dto.Gauge{Value: proto.Float64(v)}
		}
		f.Metric = append(f.Metric, m)
	}
	each := func(f *dto.MetricFamily, p pick, extra ...string) {
		for i := range s.Pods {
			pod := &s.Pods[i]
			for j := range pod.Containers {
				c := &pod.Containers[j]
				if v, ok := p(c); ok {
					add(f, lp(append([]string{"container", c.Name, "id", c.ID, "image", c.Image, "name", c.ID,
						"namespace", pod.Namespace, "pod", pod.Name}, extra...)...), v)
				}
			}
		}
	}
	mem := func(get func(c *stats.ContainerSample) uint64) pick {
		return func(c *stats.ContainerSample) (float64, bool) { return float64(get(c)), c.Cgroup.HasMemory }
	}
	net := func(f *dto.MetricFamily, get func(n machine.Interface) uint64) {
		for i := range s.Pods {
			pod := &s.Pods[i]
			for _, n := range pod.Network {
				add(f, lp("container", "POD", "interface", n.Name, "namespace", pod.Namespace, "pod", pod.Name), float64(get(n)))
			}
		}
	}
	var out []*dto.MetricFamily
	keep := func(f *dto.MetricFamily) {
		if len(f.Metric) > 0 { // the text format has no empty family
			out = append(out, f)
		}
	}
	f := fam("container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds.", true)
	each(f, func(c *stats.ContainerSample) (float64, bool) {
		return float64(c.Cgroup.CPUUsageNanos) / 1e9, c.Cgroup.HasCPU
	}, "cpu", "total")
	keep(f)
	f = fam("container_memory_usage_bytes", "Current memory usage in bytes, including all memory regardless of when it was accessed", false)
	each(f, mem(func(c *stats.ContainerSample) uint64 { return c.Cgroup.MemoryUsage }))
	keep(f)
	f = fam("container_memory_working_set_bytes", "Current working set in bytes.", false)
	each(f, mem(func(c *stats.ContainerSample) uint64 { return c.Cgroup.MemoryWorkingSet }))
	keep(f)
	f = fam("container_memory_rss", "Size of RSS in bytes.", false)
	each(f, mem(func(c *stats.ContainerSample) uint64 { return c.Cgroup.MemoryRSS }))
	keep(f)
	f = fam("container_spec_memory_limit_bytes", "Memory limit for the container.", false)
	each(f, mem(func(c *stats.ContainerSample) uint64 { return c.Cgroup.MemoryLimit }))
	keep(f)
	f = fam("container_memory_failures_total", "Cumulative count of memory allocation failures.", true)
	each(f, mem(func(c *stats.ContainerSample) uint64 { return c.Cgroup.PageFaults }), "failure_type", "pgfault", "scope", "container")
	each(f, mem(func(c *stats.ContainerSample) uint64 { return c.Cgroup.MajorPageFaults }), "failure_type", "pgmajfault", "scope", "container")
	keep(f)
	f = fam("container_processes", "Number of processes running inside the container.", false)
	each(f, func(c *stats.ContainerSample) (float64, bool) { return float64(c.Cgroup.Pids), c.Cgroup.HasPids })
	keep(f)
	f = fam("container_start_time_seconds", "Start time of the container since unix epoch in seconds.", false)
	each(f, func(c *stats.ContainerSample) (float64, bool) {
		return float64(c.StartTime.UnixNano()) / 1e9, !c.StartTime.IsZero()
	})
	keep(f)
	for _, n := range []struct {
		name, help string
		get        func(n machine.Interface) uint64
	}{
		{"container_network_receive_bytes_total", "Cumulative count of bytes received", func(n machine.Interface) uint64 { return n.RxBytes }},
		{"container_network_transmit_bytes_total", "Cumulative count of bytes transmitted", func(n machine.Interface) uint64 { return n.TxBytes }},
		{"container_network_receive_errors_total", "Cumulative count of errors encountered while receiving", func(n machine.Interface) uint64 { return n.RxErrors }},
		{"container_network_transmit_errors_total", "Cumulative count of errors encountered while transmitting", func(n machine.Interface) uint64 { return n.TxErrors }},
	} {
		f = fam(n.name, n.help, true)
		net(f, n.get)
		keep(f)
	}
	return out
}

func writeExpfmt(w io.Writer, s *stats.Snapshot) error {
	for _, f := range cadvisorFamilies(s) {
		if _, err := expfmt.MetricFamilyToText(w, f); err != nil {
			return err
		}
	}
	return nil
}

func TestExpfmtSameText(t *testing.T) {
	s := snapshot(201)
	var own, lib bytes.Buffer
	stats.WriteCadvisor(&own, s)
	if err := writeExpfmt(&lib, s); err != nil {
		t.Fatal(err)
	}
	if own.String() != lib.String() {
		a, b := own.Bytes(), lib.Bytes()
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		t.Fatalf("texts differ at byte %d:\nown: %.200s\nlib: %.200s", i, a[i:], b[i:])
	}
}

// BenchmarkCadvisor10000 encodes /metrics/cadvisor for 10,000 containers.
func BenchmarkCadvisor10000(b *testing.B) {
	s := snapshot(10000)
	var buf bytes.Buffer
	b.Run("impl=own", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			stats.WriteCadvisor(&buf, s)
		}
		b.ReportMetric(float64(buf.Len()), "bytes/scrape")
	})
	b.Run("impl=expfmt", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf.Reset()
			if err := writeExpfmt(&buf, s); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(buf.Len()), "bytes/scrape")
	})
}
