package node

import (
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metrics"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestParseResourceList(t *testing.T) {
	f := func(in string, want map[v1.ResourceName]string, wantErr string) {
		t.Helper()
		got, err := ParseResourceList(in)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Fatalf("%q: err %v, want %q", in, err, wantErr)
			}
			return
		}
		if err != nil || len(got) != len(want) {
			t.Fatalf("%q: %v, %v", in, got, err)
		}
		for k, v := range want {
			if q := got[k]; q.Cmp(resource.MustParse(v)) != 0 {
				t.Fatalf("%q: %s = %s, want %s", in, k, q.String(), v)
			}
		}
	}
	f("", nil, "")
	f("cpu=100m,memory=256Mi", map[v1.ResourceName]string{"cpu": "100m", "memory": "256Mi"}, "")
	f("cpu=1, pid=1000,ephemeral-storage=1Gi", map[v1.ResourceName]string{"cpu": "1", "pid": "1000", "ephemeral-storage": "1Gi"}, "")
	f("gpu=1", nil, "unknown resource")
	f("cpu", nil, "want name=quantity")
	f("memory=lots", nil, "memory")
	f("cpu=-1", nil, "negative")
	// Spaces around a name or a quantity, as the kubelet's flag allows
	// (found by FuzzParseResourceList).
	f(" cpu = 1 ,memory= 1Gi", map[v1.ResourceName]string{"cpu": "1", "memory": "1Gi"}, "")
	// Exponents past int64: arithmetic on them ran for half a minute
	// (found by FuzzParseResourceList); a zero with one is just zero.
	f("memory=1e66600002", nil, "out of range")
	f("memory=e66600002", map[v1.ResourceName]string{"memory": "0"}, "")
}

func TestParseThresholds(t *testing.T) {
	ts, err := ParseThresholds(DefaultEvictionHard)
	if err != nil || len(ts) != 4 {
		t.Fatalf("%v, %v", ts, err)
	}
	if ts[0].Signal != "memory.available" || ts[0].Quantity.String() != "100Mi" || ts[1].Percentage != 0.10 {
		t.Fatalf("parsed %+v %+v", ts[0], ts[1])
	}
	// Negative quantities, NaN and trailing garbage in a percentage were
	// accepted until FuzzParseThresholds found them; a negative threshold
	// made allocatable larger than capacity.
	for _, bad := range []string{"memory.available>1Gi", "disk.free<1Gi", "nodefs.available<150%", "memory.available<much",
		"memory.available<-1Gi", "nodefs.available<NaN%", "nodefs.available<10abc%", "nodefs.available<-1%"} {
		if _, err := ParseThresholds(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestAllocatable(t *testing.T) {
	capacity := Capacity(2, 8<<30, 100<<30, 110)
	kube, _ := ParseResourceList("cpu=100m,memory=256Mi")
	sys, _ := ParseResourceList("cpu=200m,memory=256Mi,ephemeral-storage=10Gi")
	hard, _ := ParseThresholds("memory.available<512Mi,nodefs.available<10%")
	a := Allocatable(capacity, kube, sys, hard)
	f := func(name v1.ResourceName, want string) {
		t.Helper()
		got := a[name]
		if got.Cmp(resource.MustParse(want)) != 0 {
			t.Fatalf("allocatable %s = %s, want %s", name, got.String(), want)
		}
	}
	f(v1.ResourceCPU, "1700m")
	f(v1.ResourceMemory, "7Gi")            // 8Gi - 256Mi - 256Mi - 512Mi
	f(v1.ResourceEphemeralStorage, "80Gi") // 100Gi - 10Gi - 10%
	f(v1.ResourcePods, "110")
	huge, _ := ParseResourceList("memory=64Gi")
	if m := Allocatable(capacity, huge, nil, nil)[v1.ResourceMemory]; m.Sign() != 0 {
		t.Fatalf("over-reserved memory = %s, want 0", m.String())
	}
}

func TestPublishShowsOnMetrics(t *testing.T) {
	capacity := Capacity(2, 8<<30, 100<<30, 110)
	Publish(capacity, Allocatable(capacity, v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}, nil, nil))
	var b strings.Builder
	metrics.WritePrometheus(&b, false)
	for _, want := range []string{`podline_node_capacity{resource="cpu"} 2`, `podline_node_allocatable{resource="cpu"} 1.5`, `podline_node_allocatable{resource="pods"} 110`} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
