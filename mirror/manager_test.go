package mirror

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/podline/podline/sources"
)

func TestManagerCreatesAndRecreates(t *testing.T) {
	e := newEnv(t)
	s := staticPod("etcd", "h1")
	e.m.Apply(update(sources.ADD, s))

	// Nothing before the first watch snapshot: every mirror would look
	// missing.
	e.reconcile()
	e.expectRequests()
	e.watch()

	// Nor before the Node has a UID to own the mirror.
	e.nodeUID.Store(types.UID(""))
	if next := e.reconcile(); next != nodeWait {
		t.Fatalf("next look in %v while waiting for the node, want %v", next, nodeWait)
	}
	e.expectRequests()
	if _, _, _, ok := e.m.MirrorOf(s); ok {
		t.Fatal("MirrorOf before any mirror exists")
	}

	e.nodeUID.Store(types.UID("node-uid"))
	if next := e.reconcile(); next != DefaultPeriod {
		t.Fatalf("next look in %v, want %v", next, DefaultPeriod)
	}
	e.expectRequests("create kube-system/etcd-node1")
	m := e.get("kube-system", "etcd-node1")
	if m == nil || m.Annotations[sources.ConfigMirrorAnnotation] != "h1" || m.OwnerReferences[0].UID != "node-uid" {
		t.Fatalf("mirror %+v", m)
	}
	// The status manager finds it before the watch shows it...
	ns, name, uid, ok := e.m.MirrorOf(s)
	if !ok || ns != "kube-system" || name != "etcd-node1" || uid != m.UID {
		t.Fatalf("MirrorOf = %s/%s %s %v, want uid %s", ns, name, uid, ok, m.UID)
	}
	// ...and no second create happens while the watch lags.
	e.reconcile()
	e.expectRequests()
	e.watch()
	e.reconcile()
	e.expectRequests()
	if _, _, uid2, ok := e.m.MirrorOf(s); !ok || uid2 != m.UID {
		t.Fatalf("MirrorOf after the watch: %s %v", uid2, ok)
	}

	// Someone deletes the mirror: it comes back with a new UID.
	if err := e.cs.CoreV1().Pods("kube-system").Delete(context.Background(), "etcd-node1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.requests()
	e.watch()
	if _, _, _, ok := e.m.MirrorOf(s); ok {
		t.Fatal("MirrorOf returns a deleted mirror")
	}
	e.reconcile()
	e.expectRequests("create kube-system/etcd-node1")
	if m2 := e.get("kube-system", "etcd-node1"); m2 == nil || m2.UID == m.UID {
		t.Fatalf("not recreated: %+v", m2)
	}
}

// TestManagerReplacesDeletingMirror: a mirror deleted gracefully carries a
// deletionTimestamp that nobody would ever act on; it is deleted at once
// and made again.
func TestManagerReplacesDeletingMirror(t *testing.T) {
	e := newEnv(t)
	s := staticPod("etcd", "h1")
	e.m.Apply(update(sources.ADD, s))
	e.watch()
	e.reconcile()
	m := e.get("kube-system", "etcd-node1")
	now := metav1.Now()
	m.DeletionTimestamp = &now
	if err := e.cs.Tracker().Update(podsGVR, m, m.Namespace); err != nil {
		t.Fatal(err)
	}
	e.requests()
	e.watch()
	if _, _, _, ok := e.m.MirrorOf(s); ok {
		t.Fatal("MirrorOf returns a mirror being deleted")
	}
	e.reconcile()
	e.expectRequests("delete kube-system/etcd-node1 uid="+string(m.UID), "create kube-system/etcd-node1")
	m2 := e.get("kube-system", "etcd-node1")
	if m2 == nil || m2.UID == m.UID || m2.DeletionTimestamp != nil {
		t.Fatalf("not replaced: %+v", m2)
	}
	// The watch still shows the old pod for a moment: it is known gone.
	e.reconcile()
	e.expectRequests()
	if _, _, uid, ok := e.m.MirrorOf(s); !ok || uid != m2.UID {
		t.Fatalf("MirrorOf %s %v, want %s", uid, ok, m2.UID)
	}
}

// TestManagerReplacesOnHashChange: an edited manifest is a new static pod
// under the same name; its old mirror goes and a new one comes.
func TestManagerReplacesOnHashChange(t *testing.T) {
	e := newEnv(t)
	old := staticPod("etcd", "h1")
	e.m.Apply(update(sources.ADD, old))
	e.watch()
	e.reconcile()
	m := e.get("kube-system", "etcd-node1")
	e.watch()
	e.requests()

	next := staticPod("etcd", "h2")
	e.m.Apply(update(sources.REMOVE, old))
	e.m.Apply(update(sources.ADD, next))
	e.m.SourcesReady()
	if _, _, _, ok := e.m.MirrorOf(next); ok {
		t.Fatal("MirrorOf returns the mirror of the old manifest")
	}
	e.reconcile()
	e.expectRequests("delete kube-system/etcd-node1 uid="+string(m.UID), "create kube-system/etcd-node1")
	if m2 := e.get("kube-system", "etcd-node1"); m2.Annotations[sources.ConfigMirrorAnnotation] != "h2" {
		t.Fatalf("new mirror carries hash %q", m2.Annotations[sources.ConfigMirrorAnnotation])
	}
}

func TestManagerDeletesOrphans(t *testing.T) {
	e := newEnv(t)
	s := staticPod("etcd", "h1")
	e.m.Apply(update(sources.ADD, s))
	e.watch()
	e.reconcile()
	e.watch()
	m := e.get("kube-system", "etcd-node1")
	e.requests()

	// Until the sources are all known, a mirror without a static pod may
	// just be one whose manifest was not read yet.
	e.m.Apply(update(sources.REMOVE, s))
	e.reconcile()
	e.expectRequests()
	e.m.SourcesReady()
	e.reconcile()
	e.expectRequests("delete kube-system/etcd-node1 uid=" + string(m.UID))
	if e.get("kube-system", "etcd-node1") != nil {
		t.Fatal("orphan mirror still there")
	}
	// The watch lags: no second delete.
	e.reconcile()
	e.expectRequests()
	e.watch()
	e.reconcile()
	e.expectRequests()
}

// TestManagerDeletePrecondition: a mirror planned for deletion that was
// replaced meanwhile by someone else is not touched.
func TestManagerDeletePrecondition(t *testing.T) {
	e := newEnv(t)
	stale := staticPod("etcd", "h1")
	stale.Annotations[sources.ConfigMirrorAnnotation] = "h1"
	stale.UID = "stale-uid"
	e.m.SetMirrors([]*v1.Pod{stale}) // the watch lags behind the server
	fresh := staticPod("etcd", "h1")
	fresh.Annotations[sources.ConfigMirrorAnnotation] = "h1"
	fresh.UID = "fresh-uid"
	if err := e.cs.Tracker().Add(fresh); err != nil {
		t.Fatal(err)
	}
	e.m.SourcesReady()
	e.reconcile()
	e.expectRequests("delete kube-system/etcd-node1 uid=stale-uid")
	if p := e.get("kube-system", "etcd-node1"); p == nil || p.UID != "fresh-uid" {
		t.Fatalf("the newer pod was deleted: %+v", p)
	}
}

// TestManagerRetries: a create the API server refuses (here: no such
// namespace) is logged once and retried every period until it works.
func TestManagerRetries(t *testing.T) {
	e := newEnv(t)
	refuse := func(ns string) bool { return ns == "kube-system" }
	e.refuse.Store(&refuse)
	s := staticPod("etcd", "h1")
	e.m.Apply(update(sources.ADD, s))
	e.watch()
	for range 3 {
		if next := e.reconcile(); next != DefaultPeriod {
			t.Fatalf("retry in %v", next)
		}
	}
	e.expectRequests("create kube-system/etcd-node1", "create kube-system/etcd-node1", "create kube-system/etcd-node1")
	if n := e.logs.Count("cannot create mirror pod"); n != 1 {
		t.Fatalf("failure logged %d times, want once", n)
	}
	e.refuse.Store(nil)
	e.reconcile()
	e.expectRequests("create kube-system/etcd-node1")
	if e.get("kube-system", "etcd-node1") == nil {
		t.Fatal("no mirror after the namespace appeared")
	}
}

// TestManagerNameTaken: a regular pod under the static pod's name is never
// deleted; a mirror found there is adopted or replaced by its hash.
func TestManagerNameTaken(t *testing.T) {
	regular := staticPod("web", "x")
	regular.Annotations = nil
	regular.UID = "regular-uid"
	ours := staticPod("etcd", "h1")
	ours.Annotations[sources.ConfigMirrorAnnotation] = "h1"
	ours.UID = "ours-uid"
	e := newEnv(t, regular, ours)
	e.watch()           // shows only ours
	e.m.SetMirrors(nil) // but say the watch has not caught up
	e.m.Apply(update(sources.ADD, staticPod("web", "hw"), staticPod("etcd", "h1")))
	e.m.SourcesReady()
	e.reconcile()
	// etcd: the create finds our mirror and adopts it; web: a regular pod.
	e.expectRequests("create kube-system/etcd-node1", "create kube-system/web-node1")
	if e.logs.Count(errNotMirror.Error()) != 1 {
		t.Fatalf("logs: want the name conflict reported once")
	}
	if _, _, uid, ok := e.m.MirrorOf(staticPod("etcd", "h1")); !ok || uid != "ours-uid" {
		t.Fatalf("adopted mirror: %s %v", uid, ok)
	}
	e.reconcile()
	e.expectRequests("create kube-system/web-node1")
	if p := e.get("kube-system", "web-node1"); p == nil || p.UID != "regular-uid" {
		t.Fatal("the regular pod was touched")
	}
}

// TestManagerRun: the loop reacts to changes without waiting for a period.
func TestManagerRun(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.m.Run(ctx) }()
	defer func() { cancel(); <-done }()
	e.m.Apply(update(sources.ADD, staticPod("etcd", "h1")))
	e.m.SetMirrors(nil)
	deadline := time.Now().Add(5 * time.Second)
	for e.get("kube-system", "etcd-node1") == nil {
		if time.Now().After(deadline) {
			t.Fatal("no mirror created")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestManagerWatchAheadOfCreate: the watch event of a new mirror can arrive
// before the create's response. A mirror deleted right after is still made
// again at the next pass, not a learnedTTL later.
func TestManagerWatchAheadOfCreate(t *testing.T) {
	e := newEnv(t)
	e.cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*v1.Pod).DeepCopy()
		p.UID = types.UID(fmt.Sprintf("mirror-uid-%d", e.uids.Add(1)))
		if err := e.cs.Tracker().Create(podsGVR, p, p.Namespace); err != nil {
			return true, nil, err
		}
		e.m.SetMirrors([]*v1.Pod{p}) // the watch, ahead of the response
		return true, p, nil
	})
	s := staticPod("etcd", "h1")
	e.m.Apply(update(sources.ADD, s))
	e.watch()
	e.reconcile()
	e.expectRequests("create kube-system/etcd-node1")
	m := e.get("kube-system", "etcd-node1")

	if err := e.cs.CoreV1().Pods("kube-system").Delete(context.Background(), "etcd-node1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.requests()
	e.watch()
	if _, _, _, ok := e.m.MirrorOf(s); ok {
		t.Fatal("MirrorOf returns the deleted mirror")
	}
	e.reconcile()
	e.expectRequests("create kube-system/etcd-node1")
	if m2 := e.get("kube-system", "etcd-node1"); m2 == nil || m2.UID == m.UID {
		t.Fatalf("not recreated: %+v", m2)
	}
}
