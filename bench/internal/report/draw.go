package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/podline/podline/bench/internal/result"
)

const (
	plotWidth  = 7 * vg.Inch
	plotHeight = 4.5 * vg.Inch
	// The legend sits under the x axis label, lined up near the y axis.
	legendMargin = 3 * vg.Millimeter
	legendIndent = 14 * vg.Millimeter
)

// styles gives every configuration the same look in every plot: the colour
// says who ran against what (agent, runtime), the dashes and glyph say the
// mode, so an ablation reads as a variant of its default line.
type styles struct{ colour map[[2]string]int }

func newStyles(r *result.Run) styles {
	var all []series
	for _, d := range r.Density {
		all = append(all, seriesOf(d.Key))
	}
	for _, i := range r.Idle {
		all = append(all, seriesOf(i.Key))
	}
	for _, c := range r.Churn {
		all = append(all, seriesOf(c.Key))
	}
	slices.SortFunc(all, cmpSeries)
	s := styles{colour: map[[2]string]int{}}
	for _, a := range all {
		pair := [2]string{a.Agent, a.Runtime}
		if _, ok := s.colour[pair]; !ok {
			s.colour[pair] = len(s.colour)
		}
	}
	return s
}

func (s styles) line(k series) draw.LineStyle {
	return draw.LineStyle{
		Color:  plotutil.DarkColors[s.colour[[2]string{k.Agent, k.Runtime}]%len(plotutil.DarkColors)],
		Width:  vg.Points(1.5),
		Dashes: plotutil.Dashes(rank(modeOrder, k.Mode)),
	}
}

func (s styles) glyph(k series) draw.GlyphStyle {
	return draw.GlyphStyle{
		Color:  s.line(k).Color,
		Radius: vg.Points(3),
		Shape:  plotutil.Shape(rank(modeOrder, k.Mode)),
	}
}

// NewPlot is an empty plot in the suite's style: title, axis labels, a
// grid, and a compact legend.
func NewPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.ThumbnailWidth = vg.Points(30)
	p.Legend.Padding = vg.Points(2)
	p.Add(plotter.NewGrid())
	return p
}

// Save draws p with its legend below the axes, where it hides no data,
// and grows the image by the legend's height. The format follows the
// file's extension (svg, png, ...).
func Save(p *plot.Plot, path string) (err error) {
	leg := p.Legend
	p.Legend = plot.NewLegend()
	defer func() { p.Legend = leg }()
	legendHeight := leg.Rectangle(draw.Canvas{}).Size().Y
	if legendHeight > 0 {
		legendHeight += 2 * legendMargin
	}
	c, err := draw.NewFormattedCanvas(plotWidth, plotHeight+legendHeight, strings.TrimPrefix(filepath.Ext(path), "."))
	if err != nil {
		return err
	}
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, 0, 0, legendHeight, 0))
	leg.Top, leg.Left = true, true
	leg.Draw(draw.Crop(dc, legendIndent, 0, legendMargin, -plotHeight-legendMargin))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	_, err = c.WriteTo(f)
	return err
}

// addLine draws one configuration's points; glyphs mark the measured
// points when there are few of them.
func addLine(p *plot.Plot, st styles, k series, label string, xys plotter.XYs, glyphs bool) error {
	xys = finite(xys)
	if len(xys) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("line %s: %w", label, err)
	}
	l.LineStyle = st.line(k)
	p.Add(l)
	if !glyphs {
		p.Legend.Add(label, l)
		return nil
	}
	sc, err := plotter.NewScatter(xys)
	if err != nil {
		return fmt.Errorf("points %s: %w", label, err)
	}
	sc.GlyphStyle = st.glyph(k)
	p.Add(sc)
	p.Legend.Add(label, l, sc)
	return nil
}

// finite drops points the plotter cannot place.
func finite(xys plotter.XYs) plotter.XYs {
	return slices.DeleteFunc(slices.Clone(xys), func(p plotter.XY) bool {
		return math.IsNaN(p.X) || math.IsInf(p.X, 0) || math.IsNaN(p.Y) || math.IsInf(p.Y, 0)
	})
}

// spread is max/min over finite values; ok is false when a value is not
// positive, since a log axis cannot show it.
func spread(vals []float64) (ratio float64, ok bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if v <= 0 {
			return 0, false
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi < lo {
		return 0, false
	}
	return hi / lo, true
}

func setLog(a *plot.Axis) {
	a.Scale = plot.LogScale{}
	a.Tick.Marker = plot.LogTicks{Prec: -1}
}

// logIfSpread switches an axis to log when its values cover at least a
// decade: pod counts of 100, 1,000 and 10,000 then sit evenly apart.
func logIfSpread(a *plot.Axis, vals []float64) {
	if r, ok := spread(vals); ok && r >= 10 {
		setLog(a)
	}
}
