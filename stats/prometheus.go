package stats

// The Prometheus text here is written by hand rather than through
// prometheus/common's expfmt. Both give byte-identical output
// (bench/libcost TestExpfmtSameText), but at 10,000 containers one
// /metrics/cadvisor scrape cost 121 ms (112–277) here against 181 ms
// (159–362) through expfmt, median of 5, with 1.15 against 2.80 million
// allocations (bench/results/2026-11-27-vm/libcost-9349551.txt): a scrape
// of a dense node is the dearest request podline serves, and podline's own
// metrics already go through VictoriaMetrics/metrics.

import (
	"io"
	"strings"

	"github.com/VictoriaMetrics/metrics"
)

// family is one metric: its samples are written together, as the text
// format wants a family's lines in one group.
type family struct {
	name, help, typ string
	samples         func(emit func(labels string, v float64))
}

func writeFamilies(w io.Writer, fams []family) {
	for _, f := range fams {
		first := true
		f.samples(func(l string, v float64) {
			if first {
				io.WriteString(w, "# HELP "+f.name+" "+f.help+"\n# TYPE "+f.name+" "+f.typ+"\n")
				first = false
			}
			if f.typ == "counter" {
				metrics.WriteCounterFloat64(w, series(f.name, l), v)
			} else {
				metrics.WriteGaugeFloat64(w, series(f.name, l), v)
			}
		})
	}
}

// WriteResource writes the kubelet's /metrics/resource, the endpoint
// metrics-server scrapes: cumulative CPU and working set for the node, each
// pod and each container, and container start times.
func WriteResource(w io.Writer, s *Snapshot) {
	eachContainer := func(pick func(p *PodSample, c *ContainerSample) (float64, bool)) func(func(string, float64)) {
		return func(emit func(string, float64)) {
			for i := range s.Pods {
				p := &s.Pods[i]
				for j := range p.Containers {
					if v, ok := pick(p, &p.Containers[j]); ok {
						emit(labels("container", p.Containers[j].Name, "namespace", p.Namespace, "pod", p.Name), v)
					}
				}
			}
		}
	}
	eachPod := func(pick func(p *PodSample) (float64, bool)) func(func(string, float64)) {
		return func(emit func(string, float64)) {
			for i := range s.Pods {
				if v, ok := pick(&s.Pods[i]); ok {
					emit(labels("namespace", s.Pods[i].Namespace, "pod", s.Pods[i].Name), v)
				}
			}
		}
	}
	node := func(v float64) func(func(string, float64)) {
		return func(emit func(string, float64)) { emit("", v) }
	}
	writeFamilies(w, []family{
		{"container_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the container in core-seconds", "counter",
			eachContainer(func(_ *PodSample, c *ContainerSample) (float64, bool) {
				return seconds(c.Cgroup.CPUUsageNanos), c.Cgroup.HasCPU
			})},
		{"container_memory_working_set_bytes", "[STABLE] Current working set of the container in bytes", "gauge",
			eachContainer(func(_ *PodSample, c *ContainerSample) (float64, bool) {
				return float64(c.Cgroup.MemoryWorkingSet), c.Cgroup.HasMemory
			})},
		{"container_start_time_seconds", "[STABLE] Start time of the container since unix epoch in seconds", "gauge",
			eachContainer(func(_ *PodSample, c *ContainerSample) (float64, bool) {
				return float64(c.StartTime.UnixNano()) / 1e9, !c.StartTime.IsZero()
			})},
		{"node_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the node in core-seconds", "counter",
			node(seconds(s.Node.CPUUsageNanos))},
		{"node_memory_working_set_bytes", "[STABLE] Current working set of the node in bytes", "gauge",
			node(float64(s.Node.Memory.WorkingSet))},
		{"pod_cpu_usage_seconds_total", "[STABLE] Cumulative cpu time consumed by the pod in core-seconds", "counter",
			eachPod(func(p *PodSample) (float64, bool) { return seconds(p.Cgroup.CPUUsageNanos), p.Cgroup.HasCPU })},
		{"pod_memory_working_set_bytes", "[STABLE] Current working set of the pod in bytes", "gauge",
			eachPod(func(p *PodSample) (float64, bool) { return float64(p.Cgroup.MemoryWorkingSet), p.Cgroup.HasMemory })},
		{"resource_scrape_error", "[STABLE] 1 if there was an error while getting container metrics, 0 otherwise", "gauge",
			node(0)},
	})
}

// WriteCadvisor writes the common container_* series of cAdvisor's
// /metrics/cadvisor for the pods' running containers, and the pod network
// on the sandbox (container="POD"), as cAdvisor reports it.
func WriteCadvisor(w io.Writer, s *Snapshot) {
	each := func(pick func(c *ContainerSample) (float64, bool), extra string) func(func(string, float64)) {
		return func(emit func(string, float64)) {
			for i := range s.Pods {
				p := &s.Pods[i]
				for j := range p.Containers {
					c := &p.Containers[j]
					if v, ok := pick(c); ok {
						emit(labels("container", c.Name, "id", c.ID, "image", c.Image, "name", c.ID,
							"namespace", p.Namespace, "pod", p.Name)+extra, v)
					}
				}
			}
		}
	}
	mem := func(get func(c *ContainerSample) uint64) func(c *ContainerSample) (float64, bool) {
		return func(c *ContainerSample) (float64, bool) { return float64(get(c)), c.Cgroup.HasMemory }
	}
	net := func(get func(rx, tx, rxe, txe uint64) uint64) func(func(string, float64)) {
		return func(emit func(string, float64)) {
			for i := range s.Pods {
				p := &s.Pods[i]
				for _, n := range p.Network {
					emit(labels("container", "POD", "interface", n.Name, "namespace", p.Namespace, "pod", p.Name),
						float64(get(n.RxBytes, n.TxBytes, n.RxErrors, n.TxErrors)))
				}
			}
		}
	}
	writeFamilies(w, []family{
		{"container_cpu_usage_seconds_total", "Cumulative cpu time consumed in seconds.", "counter",
			each(func(c *ContainerSample) (float64, bool) { return seconds(c.Cgroup.CPUUsageNanos), c.Cgroup.HasCPU }, `,cpu="total"`)},
		{"container_memory_usage_bytes", "Current memory usage in bytes, including all memory regardless of when it was accessed", "gauge",
			each(mem(func(c *ContainerSample) uint64 { return c.Cgroup.MemoryUsage }), "")},
		{"container_memory_working_set_bytes", "Current working set in bytes.", "gauge",
			each(mem(func(c *ContainerSample) uint64 { return c.Cgroup.MemoryWorkingSet }), "")},
		{"container_memory_rss", "Size of RSS in bytes.", "gauge",
			each(mem(func(c *ContainerSample) uint64 { return c.Cgroup.MemoryRSS }), "")},
		{"container_spec_memory_limit_bytes", "Memory limit for the container.", "gauge",
			each(mem(func(c *ContainerSample) uint64 { return c.Cgroup.MemoryLimit }), "")},
		{"container_memory_failures_total", "Cumulative count of memory allocation failures.", "counter",
			func(emit func(string, float64)) {
				each(mem(func(c *ContainerSample) uint64 { return c.Cgroup.PageFaults }), `,failure_type="pgfault",scope="container"`)(emit)
				each(mem(func(c *ContainerSample) uint64 { return c.Cgroup.MajorPageFaults }), `,failure_type="pgmajfault",scope="container"`)(emit)
			}},
		{"container_processes", "Number of processes running inside the container.", "gauge",
			each(func(c *ContainerSample) (float64, bool) { return float64(c.Cgroup.Pids), c.Cgroup.HasPids }, "")},
		{"container_start_time_seconds", "Start time of the container since unix epoch in seconds.", "gauge",
			each(func(c *ContainerSample) (float64, bool) {
				return float64(c.StartTime.UnixNano()) / 1e9, !c.StartTime.IsZero()
			}, "")},
		{"container_network_receive_bytes_total", "Cumulative count of bytes received", "counter",
			net(func(rx, _, _, _ uint64) uint64 { return rx })},
		{"container_network_transmit_bytes_total", "Cumulative count of bytes transmitted", "counter",
			net(func(_, tx, _, _ uint64) uint64 { return tx })},
		{"container_network_receive_errors_total", "Cumulative count of errors encountered while receiving", "counter",
			net(func(_, _, rxe, _ uint64) uint64 { return rxe })},
		{"container_network_transmit_errors_total", "Cumulative count of errors encountered while transmitting", "counter",
			net(func(_, _, _, txe uint64) uint64 { return txe })},
	})
}

func series(name, labels string) string {
	if labels == "" {
		return name
	}
	return name + "{" + labels + "}"
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// labels renders name="value" pairs with the text format's escaping.
func labels(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(kv[i])
		b.WriteString(`="`)
		labelEscaper.WriteString(&b, kv[i+1])
		b.WriteByte('"')
	}
	return b.String()
}

func seconds(nanos uint64) float64 { return float64(nanos) / 1e9 }
