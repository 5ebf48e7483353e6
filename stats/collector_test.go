package stats

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/cgroupfs/cgroupfstest"
	"github.com/podline/podline/pleg"
)

var layout = cgroupfs.Layout{Root: "/podline", PerQOS: true}

// fixture writes n BestEffort pods with one running container each into a
// v1 fixture tree, and returns a Collector over it.
func fixture(tb testing.TB, n int, unified bool) *Collector {
	tb.Helper()
	root := cgroupfstest.TempDir(tb)
	write := cgroupfstest.WriteV1
	if unified {
		write = cgroupfstest.WriteV2
	}
	var pods []v1.Pod
	start := metav1.NewTime(time.Unix(1_795_000_000, 0))
	for i := range n {
		uid := types.UID(fmt.Sprintf("uid-%05d", i))
		cid := fmt.Sprintf("c%063d", i)
		parent := layout.PodParent(uid, v1.PodQOSBestEffort)
		// CPU in whole µs: cgroup v2 counts in µs.
		st := cgroupfs.Stats{
			CPUUsageNanos: uint64(1e9 + 2000*i), MemoryUsage: 30 << 20, MemoryWorkingSet: 20 << 20, MemoryRSS: 10 << 20,
			MemoryCache: 10 << 20, PageFaults: 100, MajorPageFaults: 1, Pids: 3,
			HasCPU: true, HasMemory: true, HasPids: true,
		}
		if err := write(root, parent, st); err != nil {
			tb.Fatal(err)
		}
		st.CPUUsageNanos /= 2
		if err := write(root, parent+"/"+cid, st); err != nil {
			tb.Fatal(err)
		}
		pods = append(pods, v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%05d", i), Namespace: "ns", UID: uid},
			Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "busybox"}}},
			Status: v1.PodStatus{StartTime: &start, ContainerStatuses: []v1.ContainerStatus{{
				Name: "app", ContainerID: "containerd://" + cid, Image: "busybox",
				State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: start}},
			}}},
		})
	}
	return &Collector{
		NodeName: "node-a", Pods: podsOf(pods), Cache: pleg.NewCache(), Layout: layout,
		Reader: cgroupfs.NewReaderAt(unified, root), Rates: &cgroupfs.RateTracker{}, RootDir: root,
	}
}

// podsOf serves pods as the status store does, each beside its status.
func podsOf(pods []v1.Pod) func() iter.Seq2[*v1.Pod, *v1.PodStatus] {
	return func() iter.Seq2[*v1.Pod, *v1.PodStatus] {
		return func(yield func(*v1.Pod, *v1.PodStatus) bool) {
			for i := range pods {
				if !yield(&pods[i], &pods[i].Status) {
					return
				}
			}
		}
	}
}

func TestCollectAndShape(t *testing.T) {
	for _, unified := range []bool{false, true} {
		t.Run(fmt.Sprintf("unified=%v", unified), func(t *testing.T) {
			c := fixture(t, 3, unified)
			snap, err := c.Collect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(snap.Pods) != 3 || len(snap.Pods[1].Containers) != 1 {
				t.Fatalf("snapshot has %d pods", len(snap.Pods))
			}
			s := Summary(snap)
			p := s.Pods[1]
			if p.PodRef.Name != "p00001" || *p.CPU.UsageCoreNanoSeconds != 1e9+2000 || *p.Memory.WorkingSetBytes != 20<<20 {
				t.Fatalf("pod stats = %+v cpu %+v mem %+v", p.PodRef, p.CPU, p.Memory)
			}
			ctr := p.Containers[0]
			if ctr.Name != "app" || *ctr.CPU.UsageCoreNanoSeconds != (1e9+2000)/2 || *ctr.Memory.RSSBytes != 10<<20 {
				t.Fatalf("container stats = %+v", ctr)
			}
			if p.ProcessStats == nil || *p.ProcessStats.ProcessCount != 3 {
				t.Fatalf("process stats = %+v", p.ProcessStats)
			}
			if s.Node.NodeName != "node-a" || s.Node.CPU == nil || s.Node.Fs == nil || *s.Node.Fs.CapacityBytes == 0 {
				t.Fatalf("node = %+v", s.Node)
			}
			// The first read has no rate; a second one does.
			if ctr.CPU.UsageNanoCores != nil {
				t.Fatal("a rate from a single read")
			}
			snap2, _ := c.Collect(context.Background())
			if Summary(snap2).Pods[0].CPU.UsageNanoCores == nil {
				t.Fatal("no rate after two reads")
			}
		})
	}
}

func TestPodsWithoutCgroupsAreLeftOut(t *testing.T) {
	c := fixture(t, 2, false)
	var pods []v1.Pod
	for p, st := range c.Pods() {
		pods = append(pods, *p)
		pods[len(pods)-1].Status = *st
	}
	pods = append(pods, v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gone", UID: "uid-gone"}})
	c.Pods = podsOf(pods)
	snap, err := c.Collect(context.Background())
	if err != nil || len(snap.Pods) != 2 {
		t.Fatalf("%d pods, %v", len(snap.Pods), err)
	}
}

func TestResourceMetricsText(t *testing.T) {
	c := fixture(t, 2, false)
	snap, _ := c.Collect(context.Background())
	var b strings.Builder
	WriteResource(&b, snap)
	text := b.String()
	for _, want := range []string{
		"# TYPE container_cpu_usage_seconds_total counter\n",
		`container_cpu_usage_seconds_total{container="app",namespace="ns",pod="p00001"} 0.500001` + "\n",
		`container_memory_working_set_bytes{container="app",namespace="ns",pod="p00000"} 2.097152e+07` + "\n",
		`container_start_time_seconds{container="app",namespace="ns",pod="p00000"} 1.795e+09` + "\n",
		`pod_memory_working_set_bytes{namespace="ns",pod="p00001"} 2.097152e+07` + "\n",
		"node_memory_working_set_bytes ",
		"resource_scrape_error 0\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	// A family's samples are together: its TYPE line appears once.
	if n := strings.Count(text, "# TYPE container_cpu_usage_seconds_total"); n != 1 {
		t.Errorf("TYPE written %d times", n)
	}
	b.Reset()
	WriteCadvisor(&b, snap)
	if !strings.Contains(b.String(), `container_memory_rss{container="app",id="`) {
		t.Errorf("cadvisor text:\n%s", b.String())
	}
}

func TestLabelEscaping(t *testing.T) {
	if got := labels("a", `x"y\z`+"\n"); got != `a="x\"y\\z\n"` {
		t.Fatalf("labels = %s", got)
	}
}

// BenchmarkSummary1000Pods is /stats/summary over 1,000 pods (and their
// 1,000 containers) on a fixture tree: collect, shape, encode.
func BenchmarkSummary1000Pods(b *testing.B) {
	for _, unified := range []bool{false, true} {
		b.Run(fmt.Sprintf("unified=%v", unified), func(b *testing.B) {
			c := fixture(b, 1000, unified)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				snap, err := c.Collect(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				if err := json.NewEncoder(io.Discard).Encode(Summary(snap)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "µs/pod")
		})
	}
}
