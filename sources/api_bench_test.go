package sources

import (
	"fmt"
	"testing"
)

// BenchmarkAPIFlush10k is one coalesced delivery on a node with 10,000 API
// pods of which one changed: the store snapshot plus the Merger's diff,
// the price of one Set during a storm of watch events.
func BenchmarkAPIFlush10k(b *testing.B) {
	const n = 10000
	m := NewMerger(discardLogger(), APISource)
	defer m.Close()
	drain(m)
	src := NewAPISource(APIConfig{NodeName: "node1", Merger: m, Log: discardLogger()})
	list := make([]any, n)
	for i := range n {
		list[i] = versioned(apiPod(fmt.Sprintf("p%05d", i), "node1"), "1")
	}
	src.store.Replace(list, "1")
	src.flush()
	changed := versioned(apiPod("p00000", "node1"), "1")
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		p := changed.DeepCopy()
		p.ResourceVersion = fmt.Sprint(i + 2)
		p.Status.Message = p.ResourceVersion
		src.store.Update(p)
		src.flush()
	}
}
