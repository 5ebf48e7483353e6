package cri

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/podline/podline/cri/fake"
)

func histogramCount(o *op) uint64 {
	var n uint64
	o.duration.VisitNonZeroBuckets(func(_ string, c uint64) { n += c })
	return n
}

func TestEveryCallIsTimed(t *testing.T) {
	c, _ := dialFake(t, fake.Options{}, time.Second)
	ctx := testCtx(t)
	beforeOK, beforeErr := histogramCount(opListContainers), histogramCount(opRemovePodSandbox)
	if _, err := c.ListContainers(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.RemovePodSandbox(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if histogramCount(opListContainers) != beforeOK+1 || histogramCount(opRemovePodSandbox) != beforeErr+1 {
		t.Fatal("calls not recorded in their op's histogram")
	}

	var buf bytes.Buffer
	metrics.WritePrometheus(&buf, false)
	for _, want := range []string{
		`podline_cri_request_duration_seconds_count{op="ListContainers"}`,
		`podline_cri_errors_total{class="not_found"}`,
	} {
		if !strings.Contains(buf.String(), want) {
			t.Fatalf("metrics output lacks %s", want)
		}
	}
}
