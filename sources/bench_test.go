package sources

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// drain consumes a merger's updates until it is closed.
func drain(m *Merger) {
	go func() {
		for range m.Updates() {
		}
	}()
}

// BenchmarkFileRescanUnchanged is the periodic rescan of a directory whose
// 1,000 manifests did not change: stat only, no reading or decoding, and an
// empty diff.
func BenchmarkFileRescanUnchanged(b *testing.B) {
	dir := b.TempDir()
	for i := range 1000 {
		name := fmt.Sprintf("pod-%04d", i)
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(podYAML(name, "nginx:1")), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	m := NewMerger(discardLogger(), FileSource)
	defer m.Close()
	drain(m)
	src := NewFileSource(dir, "node1", time.Hour, m, discardLogger())
	src.scan(statAll)
	if len(src.snapshot) != 1000 || len(src.Errors()) != 0 {
		b.Fatalf("%d pods, errors %v", len(src.snapshot), src.Errors())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		src.scan(statAll)
	}
}

func benchPods(n int) []*v1.Pod {
	pods := make([]*v1.Pod, n)
	for i := range pods {
		pods[i] = testPod(fmt.Sprintf("pod-%05d", i), types.UID(fmt.Sprintf("uid-%05d", i)))
	}
	return pods
}

// BenchmarkMergerSetUnchanged10k: a 10,000-pod snapshot that did not change,
// passed as the same objects (informer caches, the file source's cache) or
// as equal new objects each time (a full comparison per pod).
func BenchmarkMergerSetUnchanged10k(b *testing.B) {
	copies := func(p []*v1.Pod) []*v1.Pod {
		out := make([]*v1.Pod, len(p))
		for i := range p {
			out[i] = p[i].DeepCopy()
		}
		return out
	}
	for _, tc := range []struct {
		name string
		sets int // distinct snapshot objects passed in turn
	}{{"same-objects", 1}, {"equal-copies", 2}} {
		b.Run(tc.name, func(b *testing.B) {
			m := NewMerger(discardLogger(), APISource)
			defer m.Close()
			drain(m)
			pods := benchPods(10000)
			m.Set(APISource, pods)
			snapshots := [][]*v1.Pod{pods}
			for len(snapshots) < tc.sets {
				snapshots = append(snapshots, copies(pods))
			}
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				m.Set(APISource, snapshots[i%len(snapshots)])
				i++
			}
		})
	}
}

// BenchmarkMergerSetChurn10k: 1% of a 10,000-pod snapshot replaced per Set.
func BenchmarkMergerSetChurn10k(b *testing.B) {
	m := NewMerger(discardLogger(), APISource)
	defer m.Close()
	drain(m)
	pods := benchPods(10000)
	m.Set(APISource, pods)
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		for j := range 100 {
			i := (n*100 + j) % len(pods)
			pods[i] = testPod(fmt.Sprintf("pod-%05d", i), types.UID(fmt.Sprintf("uid-%05d-%d", i, n)))
		}
		n++
		m.Set(APISource, pods)
	}
}
