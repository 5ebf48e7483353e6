package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestProbeServerRecordsPods(t *testing.T) {
	srv, err := startProbeServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.close()
	t0 := time.Now()
	for _, pod := range []string{"bench-00001", "bench-00001", "bench-00002"} {
		// A loopback address other than 127.0.0.1 reaches the 0.0.0.0
		// listener, as a pod address from 127.88.0.0/16 does.
		resp, err := http.Get(fmt.Sprintf("http://127.88.0.2:%d/ready/%s", srv.port(), pod))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	w := srv.window(t0, time.Now())
	if len(w["bench-00001"]) != 2 || len(w["bench-00002"]) != 1 {
		t.Fatalf("window %v", w)
	}
}

func TestProbeManifestAndMedians(t *testing.T) {
	m := string(probeManifest(8080)("bench-00007"))
	for _, want := range []string{"path: /ready/bench-00007", "port: 8080", "periodSeconds: 10", `command: ["true"]`} {
		if !strings.Contains(m, want) {
			t.Errorf("manifest lacks %q:\n%s", want, m)
		}
	}
	rs := []probeRun{{CPUPercent: 3}, {CPUPercent: 1}, {CPUPercent: 2}}
	if got := medRange(rs, func(r probeRun) float64 { return r.CPUPercent }, 1); got != "2.0 (1.0–3.0)" {
		t.Errorf("medRange = %q", got)
	}
	if q := quantile([]float64{1, 2, 3, 4}, 0.99); q != 4 {
		t.Errorf("p99 = %v", q)
	}
}
