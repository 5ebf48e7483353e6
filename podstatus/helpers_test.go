package podstatus

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/podline/podline/sources"
	"github.com/podline/podline/stages"
)

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// fakeAPI is a fake clientset that enforces what the real API server does
// with podline's requests: a patch's metadata.uid must match the object
// (422 otherwise), its metadata.resourceVersion, when it has one, too (409
// otherwise), and a delete's UID precondition (409 otherwise). It can also
// play an API server that is gone, or hold patches in flight.
type fakeAPI struct {
	*fake.Clientset
	down           atomic.Bool
	deleteNotFound atomic.Bool
	// reject makes the API server refuse every status as invalid.
	reject atomic.Bool

	mu sync.Mutex
	// hold, when set, makes the next patch wait for it to close; inFlight
	// is closed when that patch has arrived.
	hold, inFlight chan struct{}
}

func newFakeAPI(objs ...runtime.Object) *fakeAPI {
	f := &fakeAPI{Clientset: fake.NewClientset(objs...)}
	f.PrependReactor("*", "pods", f.react)
	return f
}

func (f *fakeAPI) react(action k8stesting.Action) (bool, runtime.Object, error) {
	if f.down.Load() {
		return true, nil, &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	}
	switch a := action.(type) {
	case k8stesting.PatchAction:
		f.mu.Lock()
		hold, inFlight := f.hold, f.inFlight
		f.hold, f.inFlight = nil, nil
		f.mu.Unlock()
		if hold != nil {
			close(inFlight)
			<-hold
		}
		cur, err := f.pod(a.GetNamespace(), a.GetName())
		if err != nil {
			return true, nil, err
		}
		var p struct {
			Metadata struct {
				UID             types.UID `json:"uid"`
				ResourceVersion string    `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(a.GetPatch(), &p); err != nil {
			return true, nil, apierrors.NewBadRequest(err.Error())
		}
		if f.reject.Load() {
			return true, nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, a.GetName(), field.ErrorList{
				field.Invalid(field.NewPath("status", "phase"), "", "may not go back"),
			})
		}
		if p.Metadata.UID != "" && p.Metadata.UID != cur.UID {
			return true, nil, apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, a.GetName(), field.ErrorList{
				field.Invalid(field.NewPath("metadata", "uid"), p.Metadata.UID, "field is immutable"),
			})
		}
		if p.Metadata.ResourceVersion != "" && p.Metadata.ResourceVersion != cur.ResourceVersion {
			return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), a.GetName(),
				errors.New("the object has been modified; please apply your changes to the latest version and try again"))
		}
	case k8stesting.DeleteAction:
		if f.deleteNotFound.Load() {
			return true, nil, apierrors.NewNotFound(podsGVR.GroupResource(), a.GetName())
		}
		cur, err := f.pod(a.GetNamespace(), a.GetName())
		if err != nil {
			return true, nil, err
		}
		if pre := a.GetDeleteOptions().Preconditions; pre != nil && pre.UID != nil && *pre.UID != cur.UID {
			return true, nil, apierrors.NewConflict(podsGVR.GroupResource(), a.GetName(), errors.New("precondition failed: UID"))
		}
	}
	return false, nil, nil // on to the object tracker
}

// pod reads the tracker directly: no action is recorded.
func (f *fakeAPI) pod(ns, name string) (*v1.Pod, error) {
	obj, err := f.Tracker().Get(podsGVR, ns, name)
	if err != nil {
		return nil, err
	}
	return obj.(*v1.Pod), nil
}

// holdNextPatch makes the next patch wait until release is called; wait
// returns once that patch has arrived.
func (f *fakeAPI) holdNextPatch() (wait, release func()) {
	hold, inFlight := make(chan struct{}), make(chan struct{})
	f.mu.Lock()
	f.hold, f.inFlight = hold, inFlight
	f.mu.Unlock()
	return func() { <-inFlight }, func() { close(hold) }
}

// actions returns the recorded actions with the given verb.
func (f *fakeAPI) actions(verb string) []k8stesting.Action {
	var out []k8stesting.Action
	for _, a := range f.Actions() {
		if a.GetVerb() == verb && a.GetResource() == podsGVR {
			out = append(out, a)
		}
	}
	return out
}

type env struct {
	api    *fakeAPI
	store  *stages.StatusStore
	m      *Manager
	mirror atomic.Pointer[target]
}

// start runs a manager over a fresh store and a fake API server holding
// objs. Back-offs are short and the resync is off unless edit sets it.
func start(t *testing.T, edit func(*Config), objs ...runtime.Object) *env {
	t.Helper()
	e := &env{api: newFakeAPI(objs...), store: stages.NewStatusStore()}
	cfg := Config{
		Client: e.api.Clientset, Store: e.store,
		MirrorOf: func(*v1.Pod) (string, string, types.UID, bool) {
			if p := e.mirror.Load(); p != nil {
				return p.namespace, p.name, p.uid, true
			}
			return "", "", "", false
		},
		Workers: 2, Resync: time.Hour,
		RetryBase: time.Millisecond, RetryMax: 10 * time.Millisecond,
		RequestTimeout: time.Second,
		Log:            slog.New(slog.DiscardHandler),
	}
	if edit != nil {
		edit(&cfg)
	}
	e.m = New(cfg)
	e.store.OnChange(e.m.Notify)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return e
}

// apiStatus is the status the fake API server holds for ns/name.
func (e *env) apiStatus(t *testing.T, ns, name string) v1.PodStatus {
	t.Helper()
	p, err := e.api.pod(ns, name)
	if err != nil {
		t.Fatalf("get %s/%s: %v", ns, name, err)
	}
	return p.Status
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// settle gives the workers time to act on something that must not
// produce a request; tests pair it with a check that nothing happened.
func settle() { time.Sleep(50 * time.Millisecond) }

// apiPod is a pod from the API source, as the merger hands it on.
func apiPod(name string, uid types.UID) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "ns", Name: name, UID: uid,
			Annotations: map[string]string{sources.ConfigSourceAnnotation: sources.APISource},
		},
		Spec: v1.PodSpec{NodeName: "node1", Containers: []v1.Container{{Name: "app", Image: "busybox"}}},
	}
}

// object is pod as stored in the API server: no source annotation.
func object(pod *v1.Pod) *v1.Pod {
	o := pod.DeepCopy()
	o.Annotations = nil
	return o
}

// podStatus builds a status in the shape the status stage computes, with
// nanosecond times as the node's clock gives them.
func podStatus(phase v1.PodPhase, ready bool, at time.Time) v1.PodStatus {
	r := v1.ConditionFalse
	if ready {
		r = v1.ConditionTrue
	}
	t := metav1.NewTime(at)
	cs := v1.ContainerStatus{Name: "app", Image: "busybox", Ready: ready}
	if phase == v1.PodRunning {
		cs.State.Running = &v1.ContainerStateRunning{StartedAt: t}
	} else {
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	return v1.PodStatus{
		Phase:     phase,
		HostIP:    "10.0.0.1",
		StartTime: &t,
		Conditions: []v1.PodCondition{
			{Type: v1.PodScheduled, Status: v1.ConditionTrue, LastTransitionTime: t},
			{Type: v1.PodReady, Status: r, LastTransitionTime: t},
			{Type: v1.ContainersReady, Status: r, LastTransitionTime: t},
		},
		ContainerStatuses: []v1.ContainerStatus{cs},
		QOSClass:          v1.PodQOSBestEffort,
	}
}

func condition(st v1.PodStatus, ct v1.PodConditionType) *v1.PodCondition {
	return findCondition(st.Conditions, ct)
}
