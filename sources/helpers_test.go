package sources

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/internal/podtest"
)

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func bufferLogger() (*slog.Logger, *podtest.LogBuffer) {
	b := &podtest.LogBuffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// testPod is a valid, defaulted API-style pod.
func testPod(name string, uid types.UID) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: uid},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "busybox:1.36"}}},
	}
	ApplyDefaults(p)
	return p
}

// podYAML is a minimal pod manifest.
func podYAML(name, image string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  containers:
  - name: main
    image: %s
`, name, image)
}

// recv returns the next update or fails after d.
func recv(t *testing.T, m *Merger, d time.Duration) Update {
	t.Helper()
	select {
	case u := <-m.Updates():
		return u
	case <-time.After(d):
		t.Fatalf("no update within %v", d)
		return Update{}
	}
}

// noUpdate fails if an update arrives within d.
func noUpdate(t *testing.T, m *Merger, d time.Duration) {
	t.Helper()
	select {
	case u := <-m.Updates():
		t.Fatalf("unexpected update %s", describe(u))
	case <-time.After(d):
	}
}

// describe renders an update as "OP source [ns/name ...]" for comparisons.
func describe(u Update) string {
	names := make([]string, len(u.Pods))
	for i, p := range u.Pods {
		names[i] = p.Namespace + "/" + p.Name
	}
	return fmt.Sprintf("%s %s [%s]", u.Op, u.Source, strings.Join(names, " "))
}
