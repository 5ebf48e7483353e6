package kubeapi

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// changeLog collects what onChange reports.
type changeLog struct {
	mu   sync.Mutex
	refs []ObjectRef
}

func (l *changeLog) add(r ObjectRef) { l.mu.Lock(); l.refs = append(l.refs, r); l.mu.Unlock() }

func (l *changeLog) get() []ObjectRef {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]ObjectRef(nil), l.refs...)
}

func (l *changeLog) waitFor(t *testing.T, n int) []ObjectRef {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(l.get()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("changes %v, want %d", l.get(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return l.get()
}

func startObjects(t *testing.T, cs *fake.Clientset) (*Objects, *changeLog) {
	t.Helper()
	log := &changeLog{}
	o := NewObjects(cs, log.add)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go o.Run(ctx)
	return o, log
}

func verbs(cs *fake.Clientset, verb string) int {
	n := 0
	for _, a := range cs.Actions() {
		if a.GetVerb() == verb {
			n++
		}
	}
	return n
}

func waitVerb(t *testing.T, cs *fake.Clientset, verb string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for verbs(cs, verb) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d %s requests, want %d", verbs(cs, verb), verb, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// One object, two users: one list and one watch; changes of its data
// reported once each, not changes of its metadata or of other objects;
// the watch closes after the last user.
func TestObjectsWatchOneObject(t *testing.T) {
	ctx := context.Background()
	cm := func(name, v string) *v1.ConfigMap {
		return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name}, Data: map[string]string{"k": v}}
	}
	cs := fake.NewClientset(cm("cfg", "1"), cm("other", "1"))
	o, log := startObjects(t, cs)
	ref := ObjectRef{Kind: ConfigMapObject, Namespace: "shop", Name: "cfg"}
	if _, _, ok := o.Peek(ref); ok {
		t.Fatal("Peek of an object no one acquired")
	}
	if _, _, err := o.Get(ctx, ref); !errors.Is(err, ErrNotWatched) {
		t.Fatalf("Get of an object no one acquired: %v", err)
	}
	o.Acquire(ref)
	o.Acquire(ref)
	data, found, err := o.Get(ctx, ref)
	if err != nil || !found || string(data["k"]) != "1" {
		t.Fatalf("Get: %v %v %v", data, found, err)
	}
	waitVerb(t, cs, "watch", 1)
	if l, w := verbs(cs, "list"), verbs(cs, "watch"); l != 1 || w != 1 {
		t.Fatalf("%d lists and %d watches for one object with two users", l, w)
	}
	cms := cs.CoreV1().ConfigMaps("shop")
	if _, err := cms.Update(ctx, cm("other", "2"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	labelled := cm("cfg", "1")
	labelled.Labels = map[string]string{"a": "b"}
	if _, err := cms.Update(ctx, labelled, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cms.Update(ctx, cm("cfg", "2"), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := log.waitFor(t, 1); len(got) != 1 || got[0] != ref {
		t.Fatalf("changes %v, want one of %v", got, ref)
	}
	if data, _, _ := o.Peek(ref); string(data["k"]) != "2" {
		t.Fatalf("Peek after the change: %q", data["k"])
	}
	if err := cms.Delete(ctx, "cfg", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	log.waitFor(t, 2)
	if _, found, err := o.Get(ctx, ref); found || err != nil {
		t.Fatalf("after delete: found %v, %v", found, err)
	}

	o.Release(ref)
	if o.Watched() != 1 {
		t.Fatal("released before the last user")
	}
	o.Release(ref)
	if o.Watched() != 0 {
		t.Fatal("still watched after the last user")
	}
	if _, _, ok := o.Peek(ref); ok {
		t.Fatal("Peek after release")
	}
}

// Secrets too, with the data as it is.
func TestObjectsSecret(t *testing.T) {
	cs := fake.NewClientset(&v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "db"}, Data: map[string][]byte{"pw": []byte("x")}})
	o, _ := startObjects(t, cs)
	ref := ObjectRef{Kind: SecretObject, Namespace: "shop", Name: "db"}
	o.Acquire(ref)
	data, found, err := o.Get(context.Background(), ref)
	if err != nil || !found || string(data["pw"]) != "x" {
		t.Fatalf("Get: %v %v %v", data, found, err)
	}
	missing := ObjectRef{Kind: SecretObject, Namespace: "shop", Name: "nope"}
	o.Acquire(missing)
	if _, found, err := o.Get(context.Background(), missing); found || err != nil {
		t.Fatalf("a missing secret: found %v, %v", found, err)
	}
}

// A list the API server refuses fails Get at once with its error: a
// volume worker is not held while the watch retries.
func TestObjectsGetReportsRefusal(t *testing.T) {
	cs := fake.NewClientset()
	cs.PrependReactor("list", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "cfg", errors.New("no relationship found between node and this object"))
	})
	o, _ := startObjects(t, cs)
	ref := ObjectRef{Kind: ConfigMapObject, Namespace: "shop", Name: "cfg"}
	o.Acquire(ref)
	start := time.Now()
	_, _, err := o.Get(context.Background(), ref)
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `configMap "cfg" in namespace "shop"`) {
		t.Fatalf("error %v, want the API server's refusal naming the object", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("Get took %s", took)
	}
}
