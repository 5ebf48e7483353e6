package report

import (
	"math"
	"reflect"
	"testing"

	"gonum.org/v1/plot"

	"github.com/podline/podline/bench/internal/result"
)

func TestCDFPoints(t *testing.T) {
	small := cdfPoints([]float64{30, 10, math.NaN(), 20}, 400)
	if len(small) != 3 || small[0].X != 10 || small[2].X != 30 || small[0].Y != 1.0/3 || small[2].Y != 1 {
		t.Fatalf("small CDF = %v", small)
	}

	const n = 10000
	s := samples(n, 1, 5000)
	pts := cdfPoints(s, 400)
	if len(pts) > 500 {
		t.Fatalf("%d points for %d samples, want at most 500", len(pts), n)
	}
	if pts[0].X != s[0] || pts[len(pts)-1].X != s[n-1] || pts[len(pts)-1].Y != 1 {
		t.Fatalf("ends %v … %v, want the minimum and the maximum at 1", pts[0], pts[len(pts)-1])
	}
	tail := 0
	for i, p := range pts {
		if i > 0 && (p.Y <= pts[i-1].Y || p.X < pts[i-1].X) {
			t.Fatalf("point %d %v does not follow %v", i, p, pts[i-1])
		}
		if p.Y > 0.99 {
			tail++
		}
	}
	if tail != n/100 {
		t.Fatalf("%d points above p99, want all %d", tail, n/100)
	}
}

func TestAxisScales(t *testing.T) {
	isLog := func(a plot.Axis) bool { _, ok := a.Scale.(plot.LogScale); return ok }
	pl := func(pods int) result.Key {
		return key(result.AgentPodline, result.ModeDefault, result.RuntimeFakeContainerd, pods)
	}
	f := func(keys []result.Key, vals []float64, logX, logY bool) {
		t.Helper()
		p, err := vsPods(newStyles(&result.Run{}), "t", "y", keys, vals)
		if err != nil {
			t.Fatal(err)
		}
		if isLog(p.X) != logX || isLog(p.Y) != logY {
			t.Fatalf("pods %v vals %v: log x %v y %v, want %v %v", keys, vals, isLog(p.X), isLog(p.Y), logX, logY)
		}
	}
	f([]result.Key{pl(100), pl(1000), pl(10000)}, []float64{0.5, 4, 45}, true, true)
	f([]result.Key{pl(10), pl(50)}, []float64{0.5, 4}, false, false)
	f([]result.Key{pl(100), pl(1000)}, []float64{0, 4}, true, false) // zero CPU: no log y

	cdf := func(lo, hi float64) bool {
		t.Helper()
		d := []result.Density{{Key: pl(100), StartupMs: samples(100, lo, hi)}}
		p, err := startupCDF(newStyles(&result.Run{}), d, 100)
		if err != nil {
			t.Fatal(err)
		}
		return isLog(p.X)
	}
	if !cdf(5, 5000) || cdf(50, 5000) {
		t.Fatal("CDF x axis: want log only beyond two decades")
	}
	if p, _ := startupCDF(newStyles(&result.Run{}), nil, 100); p != nil {
		t.Fatal("CDF without samples: want no plot")
	}
}

func TestStylesStableAcrossPlots(t *testing.T) {
	st := newStyles(fixture())
	s := func(agent, mode string) series {
		return series{Agent: agent, Mode: mode, Runtime: result.RuntimeFakeContainerd}
	}
	def, ch := st.line(s(result.AgentPodline, result.ModeDefault)), st.line(s(result.AgentPodline, result.ModeQueueChannel))
	kl := st.line(s(result.AgentKubelet, result.ModeDefault))
	if def.Color != ch.Color || reflect.DeepEqual(def.Dashes, ch.Dashes) {
		t.Errorf("an ablation should share its default's colour and differ in dashes: %v %v", def, ch)
	}
	if def.Color == kl.Color {
		t.Errorf("podline and kubelet share colour %v", def.Color)
	}
}
