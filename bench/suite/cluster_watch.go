package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// podTimes is what the watch saw of one pod, in the suite's wall clock.
type podTimes struct {
	seen    time.Time // first event: the create, a few ms after it
	running time.Time // first seen Running with every container ready
	gone    time.Time // deleted from the API
	// created is metadata.creationTimestamp: what the pod startup SLI
	// starts from, in whole seconds.
	created time.Time
	kind    string // kindBare or kindDeployment, from its labels
}

// podTracker follows the pods of one namespace through an informer, as
// a controller or clusterloader2 would see them.
type podTracker struct {
	mu     sync.Mutex
	pods   map[string]*podTimes
	stop   chan struct{}
	synced func() bool
}

func newPodTracker(c kubernetes.Interface, ns string) (*podTracker, error) {
	t := &podTracker{pods: map[string]*podTimes{}, stop: make(chan struct{})}
	f := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().Pods().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { t.observe(o) },
		UpdateFunc: func(_, o any) { t.observe(o) },
		DeleteFunc: func(o any) {
			if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			if p, ok := o.(*v1.Pod); ok {
				t.mu.Lock()
				t.times(p).gone = time.Now()
				t.mu.Unlock()
			}
		},
	})
	if err != nil {
		return nil, err
	}
	t.synced = inf.HasSynced
	f.Start(t.stop)
	return t, nil
}

// waitSynced waits for the informer's first list.
func (t *podTracker) waitSynced(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if !cache.WaitForCacheSync(ctx.Done(), t.synced) {
		return fmt.Errorf("pod informer not synced: %w", ctx.Err())
	}
	return nil
}

func (t *podTracker) close() { close(t.stop) }

// times is p's record, made on first sight; t.mu is held.
func (t *podTracker) times(p *v1.Pod) *podTimes {
	pt, ok := t.pods[p.Name]
	if !ok {
		pt = &podTimes{seen: time.Now(), created: p.CreationTimestamp.Time, kind: p.Labels[clusterKindLabel]}
		t.pods[p.Name] = pt
	}
	return pt
}

func (t *podTracker) observe(o any) {
	p, ok := o.(*v1.Pod)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	pt := t.times(p)
	if pt.running.IsZero() && podStarted(p) {
		pt.running = time.Now()
	}
}

// podStarted is the SLI's "running": phase Running and every container
// started and ready (the pods have no probes, so ready follows start).
func podStarted(p *v1.Pod) bool {
	if p.Status.Phase != v1.PodRunning || len(p.Status.ContainerStatuses) != len(p.Spec.Containers) {
		return false
	}
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running == nil || !c.Ready {
			return false
		}
	}
	return true
}

// counts is how many pods the watch has seen, seen running, and seen go.
func (t *podTracker) counts() (seen, running, gone int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, pt := range t.pods {
		seen++
		if !pt.running.IsZero() {
			running++
		}
		if !pt.gone.IsZero() {
			gone++
		}
	}
	return seen, running, gone
}

// snapshot copies the records.
func (t *podTracker) snapshot() map[string]podTimes {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]podTimes, len(t.pods))
	for n, pt := range t.pods {
		out[n] = *pt
	}
	return out
}

// waitFor polls done every 20 ms, printing state every 2 s, until done,
// ctx ends, or timeout passes; alive reports an agent that died.
func waitFor(ctx context.Context, label string, timeout time.Duration, alive func() error, done func() (bool, string)) error {
	start, last := time.Now(), time.Now()
	for {
		ok, state := done()
		if ok {
			return nil
		}
		if err := alive(); err != nil {
			return err
		}
		if time.Since(last) >= 2*time.Second {
			progress("%s: %s", label, state)
			last = time.Now()
		}
		if time.Since(start) > timeout {
			return fmt.Errorf("not done after %s: %s", timeout, state)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
