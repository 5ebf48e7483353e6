package mirror

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	k8stesting "k8s.io/client-go/testing"

	"github.com/podline/podline/sources"
)

// TestManagerWithAPISource wires the manager to the API source's watch, as
// the agent does, and deletes a mirror pod the way kubectl would.
func TestManagerWithAPISource(t *testing.T) {
	e := newEnv(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("manager log:\n%s", e.logs.String())
		}
	})
	watching := make(chan struct{})
	var once sync.Once
	e.cs.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		w, err := e.cs.Tracker().Watch(podsGVR, a.GetNamespace())
		once.Do(func() { close(watching) })
		return true, w, err
	})
	merger := sources.NewMerger(slog.New(slog.DiscardHandler), sources.APISource)
	src := sources.NewAPISource(sources.APIConfig{
		Client: e.cs, NodeName: testNode, Merger: merger, Mirrors: e.m.SetMirrors, Log: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { src.Run(ctx) })
	wg.Go(func() { e.m.Run(ctx) })
	wg.Go(func() {
		for u := range merger.Updates() {
			if len(u.Pods) > 0 {
				t.Errorf("a mirror pod reached the merger: %v", u.Pods[0].Name)
			}
		}
	})
	defer func() { cancel(); merger.Close(); wg.Wait() }()
	select {
	case <-watching:
	case <-time.After(5 * time.Second):
		t.Fatal("no watch")
	}

	s := staticPod("etcd", "h1")
	e.m.Apply(update(sources.ADD, s))
	e.m.SourcesReady()
	first := waitMirror(t, e, s, "")
	// Let the watch confirm it, so that from now on the watch is the truth.
	waitFor(t, "the watch shows the mirror", func() bool {
		e.m.mu.Lock()
		defer e.m.mu.Unlock()
		return len(e.m.learned) == 0 && e.m.observed[nameOf(s)] != nil
	})

	if err := e.cs.CoreV1().Pods(s.Namespace).Delete(context.Background(), s.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	second := waitMirror(t, e, s, string(first.UID))
	if second.Annotations[sources.ConfigMirrorAnnotation] != "h1" {
		t.Fatalf("recreated mirror %+v", second.ObjectMeta)
	}

	// The static pod goes: so does its mirror.
	e.m.Apply(update(sources.REMOVE, s))
	waitFor(t, "the mirror is deleted", func() bool { return e.get(s.Namespace, s.Name) == nil })
}

// waitMirror waits for a mirror of s whose UID is not notUID and which
// MirrorOf reports.
func waitMirror(t *testing.T, e *env, s *v1.Pod, notUID string) *v1.Pod {
	t.Helper()
	var got *v1.Pod
	waitFor(t, "a new mirror pod", func() bool {
		got = e.get(s.Namespace, s.Name)
		if got == nil || string(got.UID) == notUID {
			return false
		}
		_, _, uid, ok := e.m.MirrorOf(s)
		return ok && uid == got.UID
	})
	return got
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
