// Package result holds the shape of one benchmark-suite run: what the
// runner measures and what the report and the plots read. It owns no
// measuring and no drawing.
package result

import "time"

// Agents and runtimes as they appear in results.
const (
	AgentPodline = "podline"
	AgentKubelet = "kubelet"

	// RuntimeFakeZero is the fake CRI answering at once.
	RuntimeFakeZero = "fake-zero"
	// RuntimeFakeContainerd is the fake CRI with containerd-like latencies.
	RuntimeFakeContainerd = "fake-containerd"
	// RuntimeContainerd is the real containerd + runc of the test harness.
	RuntimeContainerd = "containerd"

	// ModeDefault is podline as shipped (or the kubelet as configured).
	ModeDefault = "default"
	// ModeQueueChannel is podline with --queue=channel.
	ModeQueueChannel = "queue=channel"
	// ModePLEGRelist is podline with --pleg=relist.
	ModePLEGRelist = "pleg=relist"
	// ModeStartsUnlimited is podline with --start-concurrency=0: pod
	// starts bound only by the stage workers, not the adaptive limit.
	ModeStartsUnlimited = "start-concurrency=0"
)

// Run is one invocation of the suite.
type Run struct {
	Started  time.Time `json:"started"`
	Seconds  float64   `json:"seconds"` // wall time of the whole run
	Quick    bool      `json:"quick"`
	Machine  Machine   `json:"machine"`
	Podline  string    `json:"podline"`           // podline's version string
	Kubelet  string    `json:"kubelet,omitempty"` // kubelet version, when it ran
	Latency  Latency   `json:"fakeLatencyMs"`     // the fake CRI's latencies in the fake-containerd runs
	Density  []Density `json:"density"`
	Idle     []Idle    `json:"idle"`
	Churn    []Churn   `json:"churn"`
	Ratios   []Ratio   `json:"ratios"`
	Warnings []string  `json:"warnings,omitempty"` // scenarios skipped or failed, and why
}

// Latency is the fake CRI's per-method latency in milliseconds.
type Latency map[string]float64

// Machine describes where the run happened.
type Machine struct {
	Hostname   string `json:"hostname"`
	CPUs       int    `json:"cpus"`
	MemoryMiB  int    `json:"memoryMiB"`
	Kernel     string `json:"kernel"`
	CgroupMode string `json:"cgroupMode"` // "v1", "hybrid" or "v2"
}

// Key names one configuration: who ran, in which mode, against what.
type Key struct {
	Agent   string `json:"agent"`
	Mode    string `json:"mode"`
	Runtime string `json:"runtime"`
	Pods    int    `json:"pods"`
}

// Quantiles of a distribution, in milliseconds.
type Quantiles struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Density is N pods handed to an agent at once, until all are Running.
type Density struct {
	Key
	AllRunningSec float64   `json:"allRunningSec"` // first manifest written → last pod Running in /pods
	PodsPerSec    float64   `json:"podsPerSec"`
	Startup       Quantiles `json:"startupMs"` // per pod: its manifest written → Running in /pods
	// StartupMs holds every pod's startup latency, sorted, for the CDF.
	StartupMs []float64 `json:"startupSamplesMs"`
	// Stages splits podline's start work by stage, from its own
	// histograms; empty for the kubelet.
	Stages []Stage `json:"stages,omitempty"`
	CPUSec float64 `json:"cpuSec"` // agent CPU from start of the scenario to all Running
	// KernelCPUSec is the system-time part of CPUSec: creating cgroups,
	// directories and sockets on the agent's behalf.
	KernelCPUSec  float64 `json:"kernelCpuSec"`
	PeakRSSMiB    float64 `json:"peakRssMiB"`
	RSSPerPodKiB  float64 `json:"rssPerPodKiB"` // (RSS with N pods − RSS with none) / N
	Goroutines    int     `json:"goroutines,omitempty"`
	Threads       int     `json:"threads"`
	RuntimeCPUSec float64 `json:"runtimeCpuSec"` // the runtime's CPU meanwhile (containerd + shims, or the fake)
	// PollIntervalMs is the gap between two GET /pods of the observer, and
	// PollCPUSec an estimate of the agent CPU those polls cost (included
	// in CPUSec): the polls are what both agents pay to be watched.
	PollIntervalMs float64 `json:"pollIntervalMs"`
	PollCPUSec     float64 `json:"pollCpuSec"`
}

// Stage is one pipeline stage's share of pod starts. Quantiles come from
// podline's histograms (bucket upper bounds), so they are approximate.
type Stage struct {
	Name      string    `json:"name"`
	QueueWait Quantiles `json:"queueWaitMs"`
	Work      Quantiles `json:"workMs"`
	// CRI is the time spent in the CRI calls this stage makes, per call.
	CRI     Quantiles `json:"criMs"`
	Passes  int       `json:"passes"`
	CRICall int       `json:"criCalls"`
}

// Idle is N running pods and nothing changing.
type Idle struct {
	Key
	WindowSec         float64 `json:"windowSec"`
	CPUPercent        float64 `json:"cpuPercent"` // of one core
	WakeupsPerSec     float64 `json:"wakeupsPerSec"`
	RSSMiB            float64 `json:"rssMiB"`
	RuntimeCPUPercent float64 `json:"runtimeCpuPercent"`
}

// Churn is pods deleted and added at a steady rate while N stay.
type Churn struct {
	Key
	RatePerSec float64       `json:"ratePerSec"` // pods replaced per second
	Windows    []ChurnWindow `json:"windows"`
}

// ChurnWindow is one slice of a churn run.
type ChurnWindow struct {
	StartSec   float64   `json:"startSec"`
	Started    int       `json:"started"` // pods that turned Running in the window
	Startup    Quantiles `json:"startupMs"`
	CPUPercent float64   `json:"cpuPercent"`
	RSSMiB     float64   `json:"rssMiB"`
}

// Ratio compares two configurations on one metric: Value = A / B.
type Ratio struct {
	Name   string  `json:"name"`   // e.g. "podline / kubelet, 1000 pods"
	Metric string  `json:"metric"` // e.g. "allRunningSec"
	A      Key     `json:"a"`
	B      Key     `json:"b"`
	AValue float64 `json:"aValue"`
	BValue float64 `json:"bValue"`
	Value  float64 `json:"value"`
}
