package report

import (
	"math"
	"strconv"
	"strings"
)

// num formats v to three significant digits without ever hiding integer
// digits: 12345 stays 12345 and 0.012345 becomes 0.0123. Trailing zeros
// are dropped because the tables are read, not parsed.
func num(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "n/a"
	case v == 0:
		return "0"
	}
	a := math.Abs(v)
	if a >= 100 {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	if a < 0.001 {
		return strconv.FormatFloat(v, 'e', 2, 64)
	}
	decimals := 2 - int(math.Floor(math.Log10(a)))
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// ratio formats A / B as a factor, ×0.123.
func ratio(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return "×" + num(v)
}

// perPod divides a total by a pod count, in thousandths (s → ms per pod).
func perPodMilli(total float64, pods int) float64 {
	if pods <= 0 {
		return math.NaN()
	}
	return total * 1000 / float64(pods)
}

// table is a Markdown table whose first text columns are left-aligned and
// the rest, the numbers, right-aligned.
type table struct {
	head []string
	text int
	rows [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write renders the table, or nothing when it has no rows: an empty table
// says less than its absence.
func (t *table) write(b *strings.Builder) {
	if len(t.rows) == 0 {
		return
	}
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" ")
			b.WriteString(cell(c))
			b.WriteString(" |")
		}
		b.WriteString("\n")
	}
	line(t.head)
	b.WriteString("|")
	for i := range t.head {
		if i < t.text {
			b.WriteString(" --- |")
		} else {
			b.WriteString(" ---: |")
		}
	}
	b.WriteString("\n")
	for _, r := range t.rows {
		line(r)
	}
	b.WriteString("\n")
}

// cell keeps free text (warnings, ratio names) from breaking a table row.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}
