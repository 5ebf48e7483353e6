package mirror

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/podline/podline/internal/podtest"
	"github.com/podline/podline/sources"
)

const testNode = "node1"

var podsGVR = v1.SchemeGroupVersion.WithResource("pods")

// env is a manager against a fake API server that, like the real one,
// gives created pods a UID and honours delete preconditions.
type env struct {
	t       *testing.T
	cs      *fake.Clientset
	m       *Manager
	nodeUID atomic.Value // types.UID
	logs    *podtest.LogBuffer
	uids    atomic.Int64
	// refuse, if set, fails creates in namespaces it returns true for.
	refuse atomic.Pointer[func(ns string) bool]
}

func newEnv(t *testing.T, objs ...runtime.Object) *env {
	t.Helper()
	e := &env{t: t, cs: fake.NewClientset(objs...), logs: &podtest.LogBuffer{}}
	e.nodeUID.Store(types.UID("node-uid"))
	e.cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		p := a.(k8stesting.CreateAction).GetObject().(*v1.Pod).DeepCopy()
		if f := e.refuse.Load(); f != nil && (*f)(p.Namespace) {
			return true, nil, apierrors.NewNotFound(v1.Resource("namespaces"), p.Namespace)
		}
		p.UID = types.UID(fmt.Sprintf("mirror-uid-%d", e.uids.Add(1)))
		return true, p, e.cs.Tracker().Create(podsGVR, p, p.Namespace)
	})
	e.cs.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		da := a.(k8stesting.DeleteAction)
		obj, err := e.cs.Tracker().Get(podsGVR, da.GetNamespace(), da.GetName())
		if err != nil {
			return true, nil, err
		}
		if pre := da.GetDeleteOptions().Preconditions; pre != nil && pre.UID != nil && *pre.UID != obj.(*v1.Pod).UID {
			return true, nil, apierrors.NewConflict(v1.Resource("pods"), da.GetName(), fmt.Errorf("precondition failed: UID in precondition: %s", *pre.UID))
		}
		return false, nil, nil
	})
	e.m = New(Config{
		Client: e.cs, NodeName: testNode, Log: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		NodeUID: func() types.UID { return e.nodeUID.Load().(types.UID) },
	})
	return e
}

// watch hands the manager the mirror pods in the fake API server, as the
// API source would after its watch caught up.
func (e *env) watch() {
	e.t.Helper()
	list, err := e.cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var mirrors []*v1.Pod
	for i := range list.Items {
		if sources.IsMirrorPod(&list.Items[i]) {
			mirrors = append(mirrors, &list.Items[i])
		}
	}
	e.m.SetMirrors(mirrors)
}

func (e *env) reconcile() time.Duration {
	e.t.Helper()
	return e.m.reconcile(context.Background())
}

// get returns the pod in the fake API server, or nil.
func (e *env) get(ns, name string) *v1.Pod {
	e.t.Helper()
	p, err := e.cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// requests returns "verb ns/name" for the writes since the last call.
func (e *env) requests() []string {
	var out []string
	for _, a := range e.cs.Actions() {
		switch a := a.(type) {
		case k8stesting.CreateAction:
			p := a.GetObject().(*v1.Pod)
			out = append(out, "create "+p.Namespace+"/"+p.Name)
		case k8stesting.DeleteAction:
			opts := a.GetDeleteOptions()
			s := "delete " + a.GetNamespace() + "/" + a.GetName()
			if opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 {
				s += " (grace not 0)"
			}
			if opts.Preconditions == nil || opts.Preconditions.UID == nil {
				s += " (no UID precondition)"
			} else {
				s += " uid=" + string(*opts.Preconditions.UID)
			}
			out = append(out, s)
		}
	}
	e.cs.ClearActions()
	return out
}

func (e *env) expectRequests(want ...string) {
	e.t.Helper()
	if got := e.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		e.t.Fatalf("requests:\n got: %q\nwant: %q", got, want)
	}
}

// staticPod is a static pod as the merger hands it out.
func staticPod(name, hash string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "kube-system", Name: name + "-" + testNode, UID: types.UID(hash),
			Labels: map[string]string{"component": name},
			Annotations: map[string]string{
				sources.ConfigHashAnnotation:   hash,
				sources.ConfigSourceAnnotation: sources.FileSource,
				sources.ConfigSeenAnnotation:   "2026-11-21T00:00:00Z",
			},
		},
		Spec: v1.PodSpec{NodeName: testNode, Containers: []v1.Container{{Name: "c", Image: "busybox:1.36"}}},
	}
}

func update(op sources.Op, pods ...*v1.Pod) sources.Update {
	return sources.Update{Op: op, Source: sources.FileSource, Pods: pods}
}
