package report

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/podline/podline/bench/internal/result"
)

// maxCDFPoints bounds the points of one CDF line so that a 10,000-pod run
// stays a small, diffable SVG.
const maxCDFPoints = 400

// namedPlot is a plot and the file it goes to.
type namedPlot struct {
	name string
	p    *plot.Plot
}

// buildPlots makes every plot the run has data for; a plot with no data is
// left out rather than drawn empty.
func buildPlots(r *result.Run) ([]namedPlot, error) {
	st := newStyles(r)
	var out []namedPlot
	var errs []error
	add := func(name string, p *plot.Plot, err error) {
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("plot %s: %w", name, err))
		case p != nil:
			out = append(out, namedPlot{name, p})
		}
	}
	pods := map[int]bool{}
	for _, d := range r.Density {
		pods[d.Pods] = true
	}
	for _, n := range slices.Sorted(maps.Keys(pods)) {
		p, err := startupCDF(st, r.Density, n)
		add(fmt.Sprintf("startup-cdf-%d.svg", n), p, err)
	}
	var dk, ik []result.Key
	var cpu, rss, idle []float64
	for _, d := range r.Density {
		dk, cpu, rss = append(dk, d.Key), append(cpu, d.CPUSec), append(rss, d.PeakRSSMiB)
	}
	for _, i := range r.Idle {
		ik, idle = append(ik, i.Key), append(idle, i.CPUPercent)
	}
	p, err := vsPods(st, "Agent CPU until all pods Running", "CPU (s)", dk, cpu)
	add("cpu-vs-pods.svg", p, err)
	p, err = vsPods(st, "Agent CPU with pods idle", "CPU (% of one core)", ik, idle)
	add("idle-cpu-vs-pods.svg", p, err)
	p, err = vsPods(st, "Agent peak RSS until all pods Running", "peak RSS (MiB)", dk, rss)
	add("rss-vs-pods.svg", p, err)
	p, err = churnPlot(st, r.Churn, "Startup p99 under churn", "startup p99 (ms)",
		func(w result.ChurnWindow) float64 { return w.Startup.P99 })
	add("churn-startup-p99.svg", p, err)
	p, err = churnPlot(st, r.Churn, "Agent CPU under churn", "CPU (% of one core)",
		func(w result.ChurnWindow) float64 { return w.CPUPercent })
	add("churn-cpu.svg", p, err)
	return out, errors.Join(errs...)
}

// startupCDF draws one line per configuration that ran with the given pod
// count. The x axis goes log when latencies span more than two decades,
// where a linear axis would squash the body of the distribution.
func startupCDF(st styles, rows []result.Density, pods int) (*plot.Plot, error) {
	type line struct {
		k   series
		xys plotter.XYs
	}
	var lines []line
	var xs []float64
	for _, d := range sortedByKey(rows, densityKey) {
		if d.Pods != pods || len(d.StartupMs) == 0 {
			continue
		}
		l := line{seriesOf(d.Key), cdfPoints(d.StartupMs, maxCDFPoints)}
		for _, xy := range l.xys {
			if xy.X > 0 {
				xs = append(xs, xy.X)
			}
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		return nil, nil
	}
	p := NewPlot(fmt.Sprintf("Pod startup latency CDF, %d pods", pods),
		"startup latency, manifest written to Running (ms)", "fraction of pods Running")
	logX := false
	if r, ok := spread(xs); ok && r > 100 {
		logX = true
		setLog(&p.X)
	}
	for _, l := range lines {
		xys := l.xys
		if logX {
			xys = slices.DeleteFunc(xys, func(xy plotter.XY) bool { return xy.X <= 0 })
		}
		if err := addLine(p, st, l.k, l.k.String(), xys, false); err != nil {
			return nil, err
		}
	}
	p.Y.Min, p.Y.Max = 0, 1
	return p, nil
}

// cdfPoints is the empirical CDF of samples. Above limit samples it keeps
// evenly spaced ranks for the body and every point of the top percent (up
// to limit/4), where p99 lives.
func cdfPoints(samples []float64, limit int) plotter.XYs {
	s := slices.DeleteFunc(slices.Clone(samples), func(v float64) bool {
		return math.IsNaN(v) || math.IsInf(v, 0)
	})
	slices.Sort(s)
	n := len(s)
	limit = max(limit, 8)
	out := make(plotter.XYs, 0, min(n, limit+limit/4))
	last := -1
	emit := func(i int) {
		if i > last {
			out = append(out, plotter.XY{X: s[i], Y: float64(i+1) / float64(n)})
			last = i
		}
	}
	if n <= limit {
		for i := range n {
			emit(i)
		}
		return out
	}
	tail := n - min(n/100+1, limit/4)
	for j := range limit {
		i := int(math.Round(float64(j) * float64(n-1) / float64(limit-1)))
		if i >= tail {
			break
		}
		emit(i)
	}
	for i := tail; i < n; i++ {
		emit(i)
	}
	return out
}

// vsPods draws vals[i], measured for keys[i], against the pod count with
// one line per configuration. Each axis goes log when it spans a decade.
func vsPods(st styles, title, y string, keys []result.Key, vals []float64) (*plot.Plot, error) {
	lines := map[series]plotter.XYs{}
	var xs []float64
	for i, k := range keys {
		lines[seriesOf(k)] = append(lines[seriesOf(k)], plotter.XY{X: float64(k.Pods), Y: vals[i]})
		xs = append(xs, float64(k.Pods))
	}
	if len(lines) == 0 {
		return nil, nil
	}
	p := NewPlot(title, "pods", y)
	logIfSpread(&p.X, xs)
	logIfSpread(&p.Y, vals)
	for _, s := range slices.SortedFunc(maps.Keys(lines), cmpSeries) {
		xys := lines[s]
		slices.SortStableFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		if err := addLine(p, st, s, s.String(), xys, true); err != nil {
			return nil, err
		}
	}
	fromZero(p)
	return p, nil
}

// churnPlot draws one window value over time, a line per churn run.
func churnPlot(st styles, runs []result.Churn, title, y string, val func(result.ChurnWindow) float64) (*plot.Plot, error) {
	var p *plot.Plot
	for _, c := range sortedByKey(runs, churnKey) {
		if len(c.Windows) == 0 {
			continue
		}
		if p == nil {
			p = NewPlot(title, "time since churn began (s)", y)
		}
		xys := make(plotter.XYs, 0, len(c.Windows))
		for _, w := range c.Windows {
			xys = append(xys, plotter.XY{X: w.StartSec, Y: val(w)})
		}
		slices.SortStableFunc(xys, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		label := fmt.Sprintf("%s, %s/s", keyLabel(c.Key), num(c.RatePerSec))
		if err := addLine(p, st, seriesOf(c.Key), label, xys, true); err != nil {
			return nil, err
		}
	}
	if p != nil {
		fromZero(p)
	}
	return p, nil
}

// fromZero starts a linear y axis at zero so that a small drift looks
// small, and leaves headroom so that the top line does not hug the frame.
func fromZero(p *plot.Plot) {
	if _, linear := p.Y.Scale.(plot.LinearScale); linear {
		p.Y.Min = min(p.Y.Min, 0)
		p.Y.Max += (p.Y.Max - p.Y.Min) * 0.05
	}
}
