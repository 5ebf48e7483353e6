package main

import (
	"strings"
	"testing"
)

func TestImagePullFlags(t *testing.T) {
	parse := func(args ...string) (options, error) {
		var o options
		if err := newFlagSet(&o).Parse(args); err != nil {
			t.Fatal(err)
		}
		return o, o.validate()
	}
	if o, err := parse(); err != nil || !o.serializeImagePulls || o.maxParallelImagePulls != 0 {
		t.Fatalf("defaults: serialize %v, max %d, %v; want the kubelet's (true, unset)", o.serializeImagePulls, o.maxParallelImagePulls, err)
	}
	for _, ok := range [][]string{
		{"--serialize-image-pulls=false"},
		{"--serialize-image-pulls=false", "--max-parallel-image-pulls=5"},
		{"--max-parallel-image-pulls=1"},
	} {
		if _, err := parse(ok...); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
	for _, bad := range [][]string{
		{"--max-parallel-image-pulls=2"},
		{"--serialize-image-pulls=false", "--max-parallel-image-pulls=-1"},
	} {
		if _, err := parse(bad...); err == nil || !strings.Contains(err.Error(), "--max-parallel-image-pulls") {
			t.Errorf("%v: %v, want an error naming --max-parallel-image-pulls", bad, err)
		}
	}
}
