package report

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/podline/podline/bench/internal/result"
)

// Known names sort in this order, podline and the shipped mode first;
// unknown names follow alphabetically so that new modes still sort
// deterministically.
var (
	agentOrder   = []string{result.AgentPodline, result.AgentKubelet}
	runtimeOrder = []string{result.RuntimeFakeZero, result.RuntimeFakeContainerd, result.RuntimeContainerd}
	modeOrder    = []string{result.ModeDefault, result.ModeQueueChannel, result.ModePLEGRelist, result.ModeStartsUnlimited}
)

// rank is s's place in order, or len(order) when s is not listed.
func rank(order []string, s string) int {
	if i := slices.Index(order, s); i >= 0 {
		return i
	}
	return len(order)
}

func cmpName(order []string, a, b string) int {
	return cmp.Or(cmp.Compare(rank(order, a), rank(order, b)), strings.Compare(a, b))
}

// series is a configuration without its pod count: one line in a plot.
type series struct{ Agent, Mode, Runtime string }

func seriesOf(k result.Key) series { return series{k.Agent, k.Mode, k.Runtime} }

func (s series) String() string { return s.Agent + ", " + s.Mode + ", " + s.Runtime }

func cmpSeries(a, b series) int {
	return cmp.Or(
		cmpName(agentOrder, a.Agent, b.Agent),
		cmpName(runtimeOrder, a.Runtime, b.Runtime),
		cmpName(modeOrder, a.Mode, b.Mode),
	)
}

func cmpKey(a, b result.Key) int {
	return cmp.Or(cmpSeries(seriesOf(a), seriesOf(b)), cmp.Compare(a.Pods, b.Pods))
}

// sortedByKey returns a sorted copy; the caller's slice is left as it was.
func sortedByKey[T any](in []T, key func(*T) result.Key) []T {
	out := slices.Clone(in)
	slices.SortStableFunc(out, func(a, b T) int { return cmpKey(key(&a), key(&b)) })
	return out
}

func densityKey(d *result.Density) result.Key { return d.Key }
func idleKey(i *result.Idle) result.Key       { return i.Key }
func churnKey(c *result.Churn) result.Key     { return c.Key }

// keyLabel names a configuration in one cell.
func keyLabel(k result.Key) string {
	return seriesOf(k).String() + ", " + strconv.Itoa(k.Pods) + " pods"
}
