package report

import (
	"math"
	"time"

	"github.com/podline/podline/bench/internal/result"
)

// samples returns n sorted startup latencies from lo to hi ms, spaced
// geometrically as real startup tails are.
func samples(n int, lo, hi float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		f := float64(i) / float64(max(n-1, 1))
		out[i] = lo * math.Pow(hi/lo, f)
	}
	return out
}

func key(agent, mode, runtime string, pods int) result.Key {
	return result.Key{Agent: agent, Mode: mode, Runtime: runtime, Pods: pods}
}

func stages() []result.Stage {
	return []result.Stage{
		{Name: "run-sandbox", QueueWait: result.Quantiles{P50: 0.5, P99: 12}, Work: result.Quantiles{P50: 80, P99: 150},
			CRI: result.Quantiles{P50: 77, P99: 140}, Passes: 1000, CRICall: 1000},
		{Name: "start-containers", QueueWait: result.Quantiles{P50: 0.25, P99: 8}, Work: result.Quantiles{P50: 71, P99: 130},
			CRI: result.Quantiles{P50: 35, P99: 66}, Passes: 1000, CRICall: 2000},
	}
}

// fixture is a run with both agents, two modes, two pod counts, churn,
// ratios and a warning. Rows are deliberately out of order.
func fixture() *result.Run {
	fc := result.RuntimeFakeContainerd
	pl, kl := result.AgentPodline, result.AgentKubelet
	def, ch := result.ModeDefault, result.ModeQueueChannel
	return &result.Run{
		Started: time.Date(2026, 11, 21, 14, 3, 0, 0, time.UTC),
		Seconds: 1154.6,
		Quick:   true,
		Machine: result.Machine{Hostname: "bench-1", CPUs: 2, MemoryMiB: 3936, Kernel: "6.8.0", CgroupMode: "v2"},
		Podline: "v0.1.0-test",
		Kubelet: "v1.36.3",
		Latency: result.Latency{"RunPodSandbox": 77, "CreateContainer": 35},
		Density: []result.Density{
			{Key: key(kl, def, fc, 1000), AllRunningSec: 100.3, PodsPerSec: 9.97, Startup: result.Quantiles{P50: 50000, P90: 90000, P99: 99000},
				StartupMs: samples(1000, 900, 99500), CPUSec: 180, PeakRSSMiB: 310, RSSPerPodKiB: 190, Threads: 40, RuntimeCPUSec: 3},
			{Key: key(pl, def, fc, 1000), AllRunningSec: 12.345, PodsPerSec: 81.004, Startup: result.Quantiles{P50: 45.67, P90: 120.4, P99: 987.6},
				StartupMs: samples(1000, 8, 2000), Stages: stages(), CPUSec: 4.5, KernelCPUSec: 1.25, PollCPUSec: 0.5, PeakRSSMiB: 61.26, RSSPerPodKiB: 23.456, Threads: 12, RuntimeCPUSec: 0.01234},
			{Key: key(pl, ch, fc, 100), AllRunningSec: 1.6, PodsPerSec: 62.5, Startup: result.Quantiles{P50: 90, P90: 140, P99: 160},
				StartupMs: samples(100, 80, 170), Stages: stages(), CPUSec: 0.7, PeakRSSMiB: 30, RSSPerPodKiB: 25, Threads: 9, RuntimeCPUSec: 0.2},
			{Key: key(pl, def, fc, 100), AllRunningSec: 1.2, PodsPerSec: 83.3, Startup: result.Quantiles{P50: 85, P90: 120, P99: 150},
				StartupMs: samples(100, 78, 160), Stages: stages(), CPUSec: 0.5, PeakRSSMiB: 28, RSSPerPodKiB: 22, Threads: 9, RuntimeCPUSec: 0.2},
			{Key: key(kl, def, fc, 100), AllRunningSec: 11, PodsPerSec: 9.09, Startup: result.Quantiles{P50: 5000, P90: 9000, P99: 10500},
				StartupMs: samples(100, 700, 10900), CPUSec: 20, PeakRSSMiB: 120, RSSPerPodKiB: 300, Threads: 30, RuntimeCPUSec: 0.3},
			{Key: key(pl, ch, fc, 1000), AllRunningSec: 14, PodsPerSec: 71.4, Startup: result.Quantiles{P50: 60, P90: 150, P99: 1200},
				StartupMs: samples(1000, 9, 2300), Stages: stages(), CPUSec: 6.6, PeakRSSMiB: 64, RSSPerPodKiB: 24, Threads: 12, RuntimeCPUSec: 0.02},
		},
		Idle: []result.Idle{
			{Key: key(kl, def, fc, 1000), WindowSec: 60, CPUPercent: 12.5, WakeupsPerSec: 900, RSSMiB: 300, RuntimeCPUPercent: 1},
			{Key: key(pl, def, fc, 100), WindowSec: 60, CPUPercent: 0.05, WakeupsPerSec: 3, RSSMiB: 25, RuntimeCPUPercent: 0.1},
			{Key: key(pl, def, fc, 1000), WindowSec: 60, CPUPercent: 0.21, WakeupsPerSec: 4.5, RSSMiB: 58, RuntimeCPUPercent: 0.1},
			{Key: key(kl, def, fc, 100), WindowSec: 60, CPUPercent: 2.5, WakeupsPerSec: 120, RSSMiB: 110, RuntimeCPUPercent: 0.5},
		},
		Churn: []result.Churn{{
			Key: key(pl, def, fc, 1000), RatePerSec: 20,
			Windows: []result.ChurnWindow{
				{StartSec: 20, Started: 199, Startup: result.Quantiles{P50: 91, P90: 130, P99: 171}, CPUPercent: 8.2, RSSMiB: 61},
				{StartSec: 0, Started: 201, Startup: result.Quantiles{P50: 90, P90: 128, P99: 170}, CPUPercent: 8.1, RSSMiB: 60},
				{StartSec: 10, Started: 200, Startup: result.Quantiles{P50: 92, P90: 129, P99: 172}, CPUPercent: 8.3, RSSMiB: 60.5},
			},
		}},
		Ratios: []result.Ratio{
			{Name: "podline / kubelet, 1000 pods", Metric: "allRunningSec", A: key(pl, def, fc, 1000), B: key(kl, def, fc, 1000),
				AValue: 12.345, BValue: 100.3, Value: 12.345 / 100.3},
			{Name: "queue=channel / default", Metric: "cpuSec", A: key(pl, ch, fc, 1000), B: key(pl, def, fc, 1000),
				AValue: 6.6, BValue: 4.5, Value: 6.6 / 4.5},
		},
		Warnings: []string{"real: containerd socket missing,\nscenario skipped"},
	}
}
