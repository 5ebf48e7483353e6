package stats

import (
	"bytes"
	"context"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/machine"
	"github.com/podline/podline/pleg"
)

var (
	collectDuration = metrics.NewHistogram(`podline_stats_collect_duration_seconds`)
	collectErrors   = metrics.NewCounter(`podline_stats_collect_errors_total`)
)

// Collector reads the node and every running pod when asked.
type Collector struct {
	NodeName string
	// Pods yields the pods podline runs with their status, shared: a
	// scrape reads a few fields of each and copies none.
	Pods func() iter.Seq2[*v1.Pod, *v1.PodStatus]
	// Cache gives each pod's sandbox, whose processes sit in the pod's
	// network namespace.
	Cache  *pleg.Cache
	Layout cgroupfs.Layout
	Reader *cgroupfs.Reader
	Rates  *cgroupfs.RateTracker
	// CgroupMount is the cgroup2 mount (for a sandbox's cgroup.procs).
	CgroupMount string
	// RootDir is on the node filesystem (nodefs).
	RootDir string
	// ImageFs returns the runtime's image filesystem mount point and the
	// bytes its images use.
	ImageFs func(ctx context.Context) (mountpoint string, used uint64, err error)
	// Proc is the /proc to read ("" = /proc).
	Proc string

	// The boot time and pid_max do not change: read once.
	constOnce sync.Once
	boot      time.Time
	maxPID    int64
}

func (c *Collector) proc(name string) string {
	root := c.Proc
	if root == "" {
		root = "/proc"
	}
	return filepath.Join(root, name)
}

// Collect takes a snapshot. Errors about one pod or container leave it
// out (it may have just gone); only node-level failures fail the call.
func (c *Collector) Collect(ctx context.Context) (*Snapshot, error) {
	start := time.Now()
	defer collectDuration.UpdateDuration(start)
	s := &Snapshot{Time: start, NodeName: c.NodeName}
	if err := c.node(ctx, &s.Node, start); err != nil {
		collectErrors.Inc()
		return nil, err
	}
	seen := map[string]bool{nodeRateKey: true}
	for pod, status := range c.Pods() {
		if p, ok := c.pod(pod, status, start, seen); ok {
			s.Pods = append(s.Pods, p)
		}
	}
	c.Rates.Prune(func(key string) bool { return seen[key] })
	return s, nil
}

const nodeRateKey = "/"

func (c *Collector) node(ctx context.Context, n *NodeSample, now time.Time) error {
	var err error
	if n.CPUUsageNanos, err = machine.ReadCPUUsage(c.proc("stat")); err != nil {
		return err
	}
	n.NanoCores, n.HasNanoCores = c.Rates.NanoCores(nodeRateKey, n.CPUUsageNanos, now)
	if n.Memory, err = machine.ReadMemory(c.proc("meminfo")); err != nil {
		return err
	}
	n.PageFaults, n.MajorPageFaults, _ = machine.ReadPageFaults(c.proc("vmstat"))
	if n.RootFs, err = machine.FsStats(c.RootDir); err != nil {
		return err
	}
	if c.ImageFs != nil {
		if mnt, used, err := c.ImageFs(ctx); err == nil && mnt != "" {
			n.ImageFs, _ = machine.FsStats(mnt)
			n.ImageFsUsed = used
		}
	}
	n.Network, _ = machine.NetDev(os.Getpid())
	c.constOnce.Do(func() {
		c.boot = bootTime(c.proc("stat"))
		c.maxPID = readInt(c.proc("sys/kernel/pid_max"))
	})
	n.BootTime, n.MaxPID = c.boot, c.maxPID
	n.Processes = runningTasks(c.proc("loadavg"))
	return nil
}

func (c *Collector) pod(pod *v1.Pod, status *v1.PodStatus, now time.Time, seen map[string]bool) (PodSample, bool) {
	qos := status.QOSClass
	if qos == "" {
		qos = cgroupfs.QOSClass(pod)
	}
	parent := c.Layout.PodParent(pod.UID, qos)
	if parent == "" {
		return PodSample{}, false
	}
	st, err := c.Reader.Read(parent)
	if err != nil {
		return PodSample{}, false
	}
	p := PodSample{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, Cgroup: st}
	if status.StartTime != nil {
		p.StartTime = status.StartTime.Time
	}
	seen[parent] = true
	p.NanoCores, p.HasNanoCores = c.Rates.NanoCores(parent, st.CPUUsageNanos, now)
	for _, cs := range status.ContainerStatuses {
		if cs.State.Running == nil {
			continue
		}
		_, id, ok := strings.Cut(cs.ContainerID, "://")
		if !ok {
			continue
		}
		path := c.Layout.ContainerCgroup(parent, id)
		cst, err := c.Reader.Read(path)
		if err != nil {
			continue
		}
		seen[path] = true
		cn := ContainerSample{Name: cs.Name, ID: id, Image: cs.Image, StartTime: cs.State.Running.StartedAt.Time, Cgroup: cst}
		cn.NanoCores, cn.HasNanoCores = c.Rates.NanoCores(path, cst.CPUUsageNanos, now)
		p.Containers = append(p.Containers, cn)
	}
	if !pod.Spec.HostNetwork {
		p.Network = c.podNetwork(pod, parent)
	}
	return p, true
}

// podNetwork reads the interfaces of the pod's network namespace through a
// process of its sandbox.
func (c *Collector) podNetwork(pod *v1.Pod, parent string) []machine.Interface {
	sb := c.Cache.Get(pod.UID).CurrentSandbox()
	if sb == nil || sb.State != pleg.SandboxReady || c.CgroupMount == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(c.CgroupMount, c.Layout.ContainerCgroup(parent, sb.ID), "cgroup.procs"))
	if err != nil {
		return nil
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	pid, err := strconv.Atoi(string(line))
	if err != nil {
		return nil
	}
	ifaces, _ := machine.NetDev(pid)
	return ifaces
}

// bootTime reads btime from /proc/stat.
func bootTime(path string) time.Time {
	b, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			if sec, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return time.Unix(sec, 0)
			}
		}
	}
	return time.Time{}
}

func readInt(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return v
}

// runningTasks is the number of tasks from /proc/loadavg ("0.1 0.2 0.3 2/450 123").
func runningTasks(path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 4 {
		return 0
	}
	_, total, _ := strings.Cut(f[3], "/")
	v, _ := strconv.ParseInt(total, 10, 64)
	return v
}
