package main

import (
	"fmt"
	"strings"
)

// breakdownMarkdown is a case's breakdown, one column per run and one
// for the median of the runs' medians; "" when no run has one.
func breakdownMarkdown(rs []relRun) string {
	var runs []relRun
	for _, r := range rs {
		if r.Breakdown != nil {
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Convergence breakdown, seconds after containerd answered again: median over the pods / the slowest pod " +
		"(a back-off retry due: when the pod's last failed pass before it reached containerd would have retried; a step not every pod reached shows how many did):\n\n")
	b.WriteString("| step |")
	for _, r := range runs {
		fmt.Fprintf(&b, " run %d |", r.Run)
	}
	b.WriteString(" median of the runs |\n| --- |" + strings.Repeat(" ---: |", len(runs)+1) + "\n")
	row := func(name string, cell func(relRun) (string, float64, bool)) {
		fmt.Fprintf(&b, "| %s |", name)
		var xs []float64
		for _, r := range runs {
			s, x, ok := cell(r)
			fmt.Fprintf(&b, " %s |", s)
			if ok {
				xs = append(xs, x)
			}
		}
		fmt.Fprintf(&b, " %s |\n", medOrDash(xs, 2))
	}
	row("**convergence** (suite: every invariant holds)", func(r relRun) (string, float64, bool) {
		return fmt.Sprintf("**%.2f**", r.ConvergeSec), r.ConvergeSec, r.ConvergeSec >= 0
	})
	opt := func(get func(*convBreakdown) *float64) func(relRun) (string, float64, bool) {
		return func(r relRun) (string, float64, bool) {
			x := get(r.Breakdown)
			if x == nil {
				return "–", 0, false
			}
			return fmt.Sprintf("%.2f", *x), *x, true
		}
	}
	row("containerd: booted (its log)", opt(func(b *convBreakdown) *float64 { return b.BootedSec }))
	row(stepReconnect, opt(func(b *convBreakdown) *float64 { return b.ReconnectSec }))
	group := func(title string, steps func(*convBreakdown) []convStep) {
		fmt.Fprintf(&b, "| *%s* |%s |\n", title, strings.Repeat(" |", len(runs)))
		for i, s := range steps(runs[0].Breakdown) {
			row(s.Step, func(r relRun) (string, float64, bool) {
				ss := steps(r.Breakdown)
				if i >= len(ss) || ss[i].Pods == 0 {
					return "–", 0, false
				}
				c := fmt.Sprintf("%.2f / %.2f", ss[i].MedianSec, ss[i].MaxSec)
				if ss[i].Pods < ss[i].Of {
					c += fmt.Sprintf(" (%d/%d)", ss[i].Pods, ss[i].Of)
				}
				return c, ss[i].MedianSec, true
			})
		}
	}
	group(fmt.Sprintf("the %d pods added during the outage", runs[0].Breakdown.Added[0].Of), func(c *convBreakdown) []convStep { return c.Added })
	group(fmt.Sprintf("the %d pods removed during the outage", runs[0].Breakdown.Removed[0].Of), func(c *convBreakdown) []convStep { return c.Removed })
	row("podline: failed passes of those pods after containerd answered (all / most for one pod)", func(r relRun) (string, float64, bool) {
		return fmt.Sprintf("%d / %d", r.Breakdown.FailuresAfterUp, r.Breakdown.FailuresMaxPod), float64(r.Breakdown.FailuresAfterUp), true
	})
	return b.String()
}
