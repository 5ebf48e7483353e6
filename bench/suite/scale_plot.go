package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/podline/podline/bench/internal/report"
)

// The scale scenario's curves, in the style and with the legend of the
// suite's other plots (bench/internal/report): each figure's median against N, with
// a bar from the lowest run to the highest. The pod axis stays linear:
// it holds N=0, which a log axis cannot show.

// scaleCurve is one line: a figure of every run.
type scaleCurve struct {
	name string
	get  func(scaleRun) float64
}

// scalePlot is one file.
type scalePlot struct {
	file, title, y string
	curves         []scaleCurve
}

var scalePlots = []scalePlot{
	{"scale-memory.svg", "podline memory with all pods Running, settled", "MiB", []scaleCurve{
		{"RSS", func(r scaleRun) float64 { return r.RSSMiB }},
		{"Go heap in use", func(r scaleRun) float64 { return r.HeapInuseMiB }},
		{"Go heap allocated", func(r scaleRun) float64 { return r.HeapAllocMiB }},
	}},
	{"scale-idle-cpu.svg", "podline idle CPU, nobody polling", "CPU (% of one core)", []scaleCurve{
		{"utime+stime", func(r scaleRun) float64 { return r.IdleCPUPercent }},
		{"schedstat run time", func(r scaleRun) float64 { return r.IdleRunPercent }},
	}},
	{"scale-start-delete.svg", "All pods written → Running, and deleted → gone", "time (s)", []scaleCurve{
		{"start", func(r scaleRun) float64 { return r.StartSec }},
		{"delete", func(r scaleRun) float64 { return r.DeleteSec }},
	}},
	{"scale-start-delete-cpu.svg", "podline CPU to start and to delete all pods", "CPU (s)", []scaleCurve{
		{"start", func(r scaleRun) float64 { return r.StartCPUSec }},
		{"delete", func(r scaleRun) float64 { return r.DeleteCPUSec }},
	}},
}

// spreadPoints are medians with their range, as error bars want them:
// Low and High are distances below and above the median.
type spreadPoints struct {
	plotter.XYs
	plotter.YErrors
}

// curvePoints is the median and range of get at every N, in ascending N.
func curvePoints(runs []scaleRun, get func(scaleRun) float64) spreadPoints {
	keys, by := scaleByPods(runs)
	var pts spreadPoints
	for _, n := range keys {
		med, lo, hi := median(of(by[n], get))
		pts.XYs = append(pts.XYs, plotter.XY{X: float64(n), Y: med})
		pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{med - lo, hi - med})
	}
	return pts
}

// writeScalePlots draws every plot into dir and returns the files written.
func writeScalePlots(dir string, runs []scaleRun) ([]string, error) {
	if len(runs) == 0 {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	var errs []error
	for _, sp := range scalePlots {
		p, err := sp.draw(runs)
		if err == nil {
			err = report.Save(p, filepath.Join(dir, sp.file))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("plot %s: %w", sp.file, err))
			continue
		}
		files = append(files, sp.file)
	}
	return files, errors.Join(errs...)
}

func (sp scalePlot) draw(runs []scaleRun) (*plot.Plot, error) {
	p := report.NewPlot(sp.title, "pods", sp.y)
	for i, c := range sp.curves {
		pts := curvePoints(runs, c.get)
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		eb, err := plotter.NewYErrorBars(pts)
		if err != nil {
			return nil, fmt.Errorf("%s range: %w", c.name, err)
		}
		col := plotutil.Color(i)
		l.Color, l.Width, l.Dashes = col, vg.Points(1.5), plotutil.Dashes(i)
		sc.Color, sc.Shape, sc.Radius = col, plotutil.Shape(i), vg.Points(3)
		eb.Color = col
		p.Add(l, sc, eb)
		p.Legend.Add(c.name, l, sc)
	}
	// From zero, so that a flat line looks flat.
	p.Y.Min = min(p.Y.Min, 0)
	if p.Y.Max <= p.Y.Min {
		p.Y.Max = p.Y.Min + 1 // every value zero: an axis the plotter can draw
	}
	p.X.Min = min(p.X.Min, 0)
	return p, nil
}
