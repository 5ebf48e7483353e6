package report

import (
	"math"
	"strings"
	"testing"
)

func TestNum(t *testing.T) {
	f := func(v float64, want string) {
		t.Helper()
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
	f(0, "0")
	f(12345.6, "12346")
	f(987.6, "988")
	f(100, "100")
	f(99.96, "100")
	f(45.67, "45.7")
	f(4.5, "4.5")
	f(1, "1")
	f(0.5, "0.5")
	f(0.01234, "0.0123")
	f(0.001, "0.001")
	f(0.0001234, "1.23e-04")
	f(-3.456, "-3.46")
	f(math.NaN(), "n/a")
	f(math.Inf(1), "n/a")
}

func TestRatio(t *testing.T) {
	f := func(v float64, want string) {
		t.Helper()
		if got := ratio(v); got != want {
			t.Errorf("ratio(%v) = %q, want %q", v, got, want)
		}
	}
	f(0.12308, "×0.123")
	f(1.4667, "×1.47")
	f(12, "×12")
	f(math.Inf(1), "n/a")
}

func TestTable(t *testing.T) {
	var b strings.Builder
	empty := table{head: []string{"a", "n"}, text: 1}
	empty.write(&b)
	if b.Len() != 0 {
		t.Fatalf("empty table wrote %q", b.String())
	}
	tb := table{head: []string{"name", "n"}, text: 1}
	tb.add("a|b\nc", "1")
	tb.write(&b)
	want := "| name | n |\n| --- | ---: |\n| a\\|b c | 1 |\n\n"
	if b.String() != want {
		t.Fatalf("table = %q, want %q", b.String(), want)
	}
}
