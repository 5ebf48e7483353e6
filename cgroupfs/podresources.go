package cgroupfs

import (
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// CFSPeriodUS is the CFS period written with every quota: the kubelet's
// default --cpu-cfs-quota-period, 100 ms.
const CFSPeriodUS uint64 = 100000

const (
	// minShares is the smallest cpu.shares the kernel accepts; BestEffort
	// pods and the BestEffort QoS cgroup get exactly this.
	minShares uint64 = 2
	// maxShares is the largest cpu.shares the kernel accepts.
	maxShares uint64 = 262144
	// minQuotaUS is the smallest CFS quota the kernel accepts (1 ms).
	minQuotaUS int64 = 1000
)

// Resources are the limits of one cgroup. A nil field is not written, so
// the value the cgroup already has (the kernel default for a new one)
// stays. A negative CPUQuota, MemoryLimit or PidsLimit means "no limit"
// and is written as such; PodLimits reads an unlimited value back as -1.
type Resources struct {
	// CPUShares is cpu.shares on v1; on v2 it is converted to cpu.weight
	// (SharesToWeight).
	CPUShares *uint64
	// CPUQuota is the CFS quota in µs per CPUPeriod µs.
	CPUQuota  *int64
	CPUPeriod *uint64
	// MemoryLimit is in bytes.
	MemoryLimit *int64
	// PidsLimit is the pod's process limit; PodResources leaves it nil:
	// it comes from the node's --pod-max-pids, not from the pod.
	PidsLimit *int64
}

// String renders the set fields, for logs: "shares=102 quota=50000/100000
// memory=134217728".
func (r Resources) String() string {
	var parts []string
	if r.CPUShares != nil {
		parts = append(parts, "shares="+strconv.FormatUint(*r.CPUShares, 10))
	}
	if r.CPUQuota != nil || r.CPUPeriod != nil {
		q, p := "-", "-"
		if r.CPUQuota != nil {
			q = strconv.FormatInt(*r.CPUQuota, 10)
		}
		if r.CPUPeriod != nil {
			p = strconv.FormatUint(*r.CPUPeriod, 10)
		}
		parts = append(parts, "quota="+q+"/"+p)
	}
	if r.MemoryLimit != nil {
		parts = append(parts, "memory="+strconv.FormatInt(*r.MemoryLimit, 10))
	}
	if r.PidsLimit != nil {
		parts = append(parts, "pids="+strconv.FormatInt(*r.PidsLimit, 10))
	}
	if len(parts) == 0 {
		return "{}"
	}
	return strings.Join(parts, " ")
}

// PodResources computes the limits of a pod's cgroup the way the kubelet
// does:
//   - cpu shares from the pod's cpu request (MilliCPUToShares);
//   - a CFS quota only when every container, init containers included,
//     has a cpu limit: the pod's cpu limit per CFSPeriodUS;
//   - a memory limit only when every container has a memory limit.
//
// The pod's request and limit of a resource is the larger of what its app
// containers (plus restartable "sidecar" init containers, which run beside
// them) need together and what the largest init container needs while it
// runs (plus the sidecars started before it); a missing request defaults
// to the container's limit; the pod overhead is added. A BestEffort pod
// gets the minimum shares and nothing else.
func PodResources(pod *v1.Pod) Resources {
	shares := minShares
	if QOSClass(pod) == v1.PodQOSBestEffort {
		return Resources{CPUShares: &shares}
	}
	req := podAmounts(pod, containerRequests)
	lim := podAmounts(pod, containerLimits)
	overhead := listAmounts(pod.Spec.Overhead)
	req.add(overhead)
	shares = MilliCPUToShares(req.cpuMilli)
	r := Resources{CPUShares: &shares}

	cpuLimited, memLimited := everyContainerLimits(pod)
	if cpuLimited && lim.cpuMilli > 0 {
		quota := MilliCPUToQuota(lim.cpuMilli+overhead.cpuMilli, CFSPeriodUS)
		period := CFSPeriodUS
		r.CPUQuota, r.CPUPeriod = &quota, &period
	}
	if memLimited && lim.memBytes > 0 {
		mem := lim.memBytes + overhead.memBytes
		r.MemoryLimit = &mem
	}
	return r
}

// PodCPURequestMilli is the pod's cpu request as PodResources counts it
// (overhead included): what a Burstable pod adds to SetBurstableCPU.
func PodCPURequestMilli(pod *v1.Pod) int64 {
	a := podAmounts(pod, containerRequests)
	a.add(listAmounts(pod.Spec.Overhead))
	return a.cpuMilli
}

// MilliCPUToShares converts a cpu request in millicores to cpu.shares
// (1024 per core), clamped to what the kernel accepts.
func MilliCPUToShares(milli int64) uint64 {
	if milli <= 0 {
		return minShares
	}
	shares := uint64(milli) * 1024 / 1000
	return min(max(shares, minShares), maxShares)
}

// MilliCPUToQuota converts a cpu limit in millicores to a CFS quota in µs
// per period µs, at least the kernel's 1 ms; 0 for no limit.
func MilliCPUToQuota(milli int64, period uint64) int64 {
	if milli <= 0 {
		return 0
	}
	quota := milli * int64(period) / 1000
	return max(quota, minQuotaUS)
}

// SharesToWeight converts cpu.shares [2, 262144] to cgroup2 cpu.weight
// [1, 10000] linearly, as runc and the kubelet do; 0 stays 0 (unset).
func SharesToWeight(shares uint64) uint64 {
	if shares == 0 {
		return 0
	}
	shares = min(max(shares, minShares), maxShares)
	return 1 + (shares-minShares)*9999/(maxShares-minShares)
}

// weightToShares inverts SharesToWeight: the smallest shares that map to
// weight, so reading a v2 cgroup back and writing it again changes nothing.
func weightToShares(weight uint64) uint64 {
	if weight == 0 {
		return 0
	}
	weight = min(max(weight, 1), 10000)
	span := maxShares - minShares
	return minShares + ((weight-1)*span+9998)/9999
}

// amounts are a cpu and memory quantity: millicores and bytes.
type amounts struct {
	cpuMilli int64
	memBytes int64
}

func (a *amounts) add(b amounts) {
	a.cpuMilli += b.cpuMilli
	a.memBytes += b.memBytes
}

func (a *amounts) atLeast(b amounts) {
	a.cpuMilli = max(a.cpuMilli, b.cpuMilli)
	a.memBytes = max(a.memBytes, b.memBytes)
}

func listAmounts(rl v1.ResourceList) amounts {
	var a amounts
	if q, ok := rl[v1.ResourceCPU]; ok {
		a.cpuMilli = q.MilliValue()
	}
	if q, ok := rl[v1.ResourceMemory]; ok {
		a.memBytes = q.Value()
	}
	return a
}

// containerRequests are a container's requests, a missing one defaulting
// to the limit as API defaulting does (an explicit zero stays zero).
func containerRequests(c *v1.Container) amounts {
	a := listAmounts(c.Resources.Limits)
	if q, ok := c.Resources.Requests[v1.ResourceCPU]; ok {
		a.cpuMilli = q.MilliValue()
	}
	if q, ok := c.Resources.Requests[v1.ResourceMemory]; ok {
		a.memBytes = q.Value()
	}
	return a
}

func containerLimits(c *v1.Container) amounts {
	return listAmounts(c.Resources.Limits)
}

func isSidecar(c *v1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
}

// podAmounts sums what of returns over the pod's containers: app containers and
// sidecars run together and add up; each ordinary init container runs
// alone beside the sidecars started before it; the pod needs the larger.
func podAmounts(pod *v1.Pod, of func(*v1.Container) amounts) amounts {
	var running amounts
	for i := range pod.Spec.Containers {
		running.add(of(&pod.Spec.Containers[i]))
	}
	var sidecars, initPeak amounts
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		a := of(c)
		if isSidecar(c) {
			running.add(a)
			sidecars.add(a)
			a = sidecars
		} else {
			a.add(sidecars)
		}
		initPeak.atLeast(a)
	}
	running.atLeast(initPeak)
	return running
}

// everyContainerLimits reports whether every container (init containers
// included) has a non-zero cpu limit, and a non-zero memory limit: a pod
// limit exists only then, since one unlimited container makes the pod
// unlimited.
func everyContainerLimits(pod *v1.Pod) (cpu, memory bool) {
	cpu, memory = true, true
	check := func(cs []v1.Container) {
		for i := range cs {
			lim := listAmounts(cs[i].Resources.Limits)
			cpu = cpu && lim.cpuMilli > 0
			memory = memory && lim.memBytes > 0
		}
	}
	check(pod.Spec.InitContainers)
	check(pod.Spec.Containers)
	return cpu, memory
}
