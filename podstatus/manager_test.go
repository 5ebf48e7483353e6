package podstatus

import (
	"encoding/json"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"

	"github.com/podline/podline/sources"
)

func patchUID(t *testing.T, a k8stesting.Action) types.UID {
	t.Helper()
	var p struct {
		Metadata struct {
			UID types.UID `json:"uid"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(a.(k8stesting.PatchAction).GetPatch(), &p); err != nil {
		t.Fatal(err)
	}
	return p.Metadata.UID
}

func TestChangedStatusIsPatched(t *testing.T) {
	pod := apiPod("p1", "u1")
	obj := object(pod)
	obj.Status = v1.PodStatus{Phase: v1.PodPending, Conditions: []v1.PodCondition{{Type: "example.com/lb", Status: v1.ConditionTrue}}}
	e := start(t, nil, obj)

	e.store.Set(pod, podStatus(v1.PodRunning, true, time.Now()))
	eventually(t, "status patched", func() bool { return e.apiStatus(t, "ns", "p1").Phase == v1.PodRunning })

	patches := e.api.actions("patch")
	if len(patches) != 1 {
		t.Fatalf("%d patches, want 1", len(patches))
	}
	p := patches[0].(k8stesting.PatchAction)
	if p.GetSubresource() != "status" || p.GetPatchType() != types.StrategicMergePatchType || p.GetName() != "p1" || p.GetNamespace() != "ns" {
		t.Fatalf("patch went to %s %s/%s/%s", p.GetPatchType(), p.GetNamespace(), p.GetName(), p.GetSubresource())
	}
	if uid := patchUID(t, p); uid != "u1" {
		t.Fatalf("patch carries uid %q, want the pod's u1 as precondition", uid)
	}
	st := e.apiStatus(t, "ns", "p1")
	if c := condition(st, "example.com/lb"); c == nil || c.Status != v1.ConditionTrue {
		t.Fatalf("a condition owned by someone else was lost: %+v", st.Conditions)
	}
	if c := condition(st, v1.PodReady); c == nil || c.Status != v1.ConditionTrue {
		t.Fatalf("Ready not sent: %+v", st.Conditions)
	}
	if len(st.ContainerStatuses) != 1 || st.ContainerStatuses[0].State.Running == nil {
		t.Fatalf("container statuses not sent: %+v", st.ContainerStatuses)
	}
}

func TestUnchangedStatusIsNotPatched(t *testing.T) {
	pod := apiPod("p1", "u1")
	st := podStatus(v1.PodRunning, true, time.Now())
	obj := object(pod)
	obj.Status = roundTrip(t, st) // as a previous run of podline left it
	e := start(t, nil, obj)

	skipped := patchesSkipped.Get()
	e.store.Set(pod, st)
	eventually(t, "the sync", func() bool { return patchesSkipped.Get() == skipped+1 })
	// A new version with the same status (a new pod spec object): the
	// status known from the first read is reused, nothing is sent.
	e.store.Set(pod.DeepCopy(), st)
	eventually(t, "the second sync", func() bool { return patchesSkipped.Get() == skipped+2 })

	if n := len(e.api.actions("patch")); n != 0 {
		t.Fatalf("%d patches for a status the API server already had", n)
	}
	if n := len(e.api.actions("get")); n != 1 {
		t.Fatalf("%d reads of the pod, want 1", n)
	}
}

func TestLatestStatusWinsAndStaleIsNotSent(t *testing.T) {
	pod := apiPod("p1", "u1")
	e := start(t, nil, object(pod))
	now := time.Now()

	wait, release := e.api.holdNextPatch()
	e.store.Set(pod, podStatus(v1.PodPending, false, now))
	wait() // the first version is in flight
	e.store.Set(pod, podStatus(v1.PodRunning, false, now))
	latest := podStatus(v1.PodRunning, true, now)
	e.store.Set(pod, latest)
	release()

	eventually(t, "the latest status", func() bool {
		c := condition(e.apiStatus(t, "ns", "p1"), v1.PodReady)
		return c != nil && c.Status == v1.ConditionTrue
	})
	if n := len(e.api.actions("patch")); n != 2 {
		t.Fatalf("%d patches, want 2: the one in flight, then only the latest", n)
	}

	// Once sent, a version is never sent again.
	stale := patchesStale.Get()
	e.m.Notify("u1")
	eventually(t, "the stale sync", func() bool { return patchesStale.Get() == stale+1 })
	if n := len(e.api.actions("patch")); n != 2 {
		t.Fatalf("a sent version was sent again: %d patches", n)
	}
	if got, want := e.apiStatus(t, "ns", "p1"), roundTrip(t, latest); !equality.Semantic.DeepEqual(got, want) {
		t.Fatalf("API status\n got %+v\nwant %+v", got, want)
	}
}

func TestOutageCatchesUp(t *testing.T) {
	names := []string{"a", "b", "c"}
	pods := make([]*v1.Pod, len(names))
	e := start(t, nil, object(apiPod("a", "ua")), object(apiPod("b", "ub")), object(apiPod("c", "uc")))
	for i, n := range names {
		pods[i] = apiPod(n, types.UID("u"+n))
	}
	now := time.Now()
	e.store.Set(pods[0], podStatus(v1.PodPending, false, now))
	eventually(t, "a's first status", func() bool { return e.apiStatus(t, "ns", "a").Phase == v1.PodPending })

	e.api.down.Store(true)
	failed := patchesError.Get()
	for _, p := range pods[1:] {
		e.store.Set(p, podStatus(v1.PodPending, false, now))
	}
	e.store.Set(pods[0], podStatus(v1.PodRunning, false, now))
	eventually(t, "retries during the outage", func() bool { return patchesError.Get() >= failed+uint64(3*len(pods)) })
	e.store.Set(pods[0], podStatus(v1.PodRunning, true, now))
	eventually(t, "more retries", func() bool { return patchesError.Get() >= failed+uint64(6*len(pods)) })
	for _, n := range names[1:] {
		if ph := e.apiStatus(t, "ns", n).Phase; ph != "" {
			t.Fatalf("pod %s got phase %q while the API server was down", n, ph)
		}
	}

	e.api.down.Store(false)
	eventually(t, "statuses after the outage", func() bool {
		return e.apiStatus(t, "ns", "a").Phase == v1.PodRunning &&
			e.apiStatus(t, "ns", "b").Phase == v1.PodPending &&
			e.apiStatus(t, "ns", "c").Phase == v1.PodPending
	})
	if c := condition(e.apiStatus(t, "ns", "a"), v1.PodReady); c == nil || c.Status != v1.ConditionTrue {
		t.Fatalf("pod a did not get its latest status: %+v", c)
	}
	// A refused connection proves nothing landed: a's status as read
	// before the outage still holds, and it is not read again.
	reads := 0
	for _, a := range e.api.actions("get") {
		if a.(k8stesting.GetAction).GetName() == "a" {
			reads++
		}
	}
	if reads != 1 {
		t.Fatalf("pod a was read %d times, want 1", reads)
	}
}

func TestStaticPodStatusGoesToMirror(t *testing.T) {
	static := apiPod("web-node1", "s1")
	static.Annotations[sources.ConfigSourceAnnotation] = sources.FileSource
	mirror1 := object(static)
	mirror1.UID = "m1"
	e := start(t, nil, mirror1)

	e.store.Set(static, podStatus(v1.PodRunning, true, time.Now()))
	settle()
	if n := len(e.api.Actions()); n != 0 {
		t.Fatalf("%d requests for a static pod without a mirror pod", n)
	}

	e.mirror.Store(&target{namespace: "ns", name: "web-node1", uid: "m1"})
	e.m.Notify("s1") // the mirror pod manager created it
	eventually(t, "mirror status", func() bool { return e.apiStatus(t, "ns", "web-node1").Phase == v1.PodRunning })
	patches := e.api.actions("patch")
	if uid := patchUID(t, patches[len(patches)-1]); uid != "m1" {
		t.Fatalf("patch carries uid %q, want the mirror's m1", uid)
	}

	// Someone deletes the mirror pod; a new one is created. The status has
	// not changed on the node, yet the new mirror must get it.
	if err := e.api.Tracker().Delete(podsGVR, "ns", "web-node1"); err != nil {
		t.Fatal(err)
	}
	mirror2 := object(static)
	mirror2.UID = "m2"
	if err := e.api.Tracker().Add(mirror2); err != nil {
		t.Fatal(err)
	}
	e.mirror.Store(&target{namespace: "ns", name: "web-node1", uid: "m2"})
	e.m.Notify("s1")
	eventually(t, "new mirror status", func() bool { return e.apiStatus(t, "ns", "web-node1").Phase == v1.PodRunning })
	patches = e.api.actions("patch")
	if uid := patchUID(t, patches[len(patches)-1]); uid != "m2" {
		t.Fatalf("patch carries uid %q, want the new mirror's m2", uid)
	}
}

func TestTerminatedPodIsDeleted(t *testing.T) {
	pod := apiPod("p1", "u1")
	gone := metav1.NewTime(time.Now())
	pod.DeletionTimestamp = &gone
	e := start(t, nil, object(pod))
	now := time.Now()

	// The teardown completes while an earlier status is in flight: the
	// delete must wait for the final status, not follow the earlier one.
	wait, release := e.api.holdNextPatch()
	e.store.Set(pod, podStatus(v1.PodRunning, true, now))
	wait()
	final := podStatus(v1.PodFailed, false, now)
	final.ContainerStatuses[0].State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"}}
	e.store.Set(pod, final)
	e.m.Terminated("u1")
	release()

	eventually(t, "the delete", func() bool { _, err := e.api.pod("ns", "p1"); return err != nil })
	var deletes []k8stesting.DeleteAction
	lastPatch, deleteAt := -1, -1
	for i, a := range e.api.Actions() {
		switch a := a.(type) {
		case k8stesting.PatchAction:
			lastPatch = i
		case k8stesting.DeleteAction:
			deletes = append(deletes, a)
			deleteAt = i
		}
	}
	if len(deletes) != 1 {
		t.Fatalf("%d deletes, want 1", len(deletes))
	}
	opts := deletes[0].GetDeleteOptions()
	if opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 {
		t.Fatalf("delete grace period %v, want 0", opts.GracePeriodSeconds)
	}
	if opts.Preconditions == nil || opts.Preconditions.UID == nil || *opts.Preconditions.UID != "u1" {
		t.Fatalf("delete preconditions %+v, want uid u1", opts.Preconditions)
	}
	if lastPatch > deleteAt {
		t.Fatal("a status was patched after the delete")
	}
	// The final status was sent before the delete: the last patch holds it.
	var p v1.Pod
	patch := e.api.Actions()[lastPatch].(k8stesting.PatchAction).GetPatch()
	if err := json.Unmarshal(patch, &p); err != nil || p.Status.Phase != v1.PodFailed {
		t.Fatalf("last patch before the delete is not the final status: %s", patch)
	}
}

func TestTerminatedWithoutDeletionKeepsPod(t *testing.T) {
	pod := apiPod("p1", "u1") // finished, not deleted
	e := start(t, nil, object(pod))
	e.store.Set(pod, podStatus(v1.PodFailed, false, time.Now()))
	e.m.Terminated("u1")
	eventually(t, "status", func() bool { return e.apiStatus(t, "ns", "p1").Phase == v1.PodFailed })
	settle()
	if n := len(e.api.actions("delete")); n != 0 {
		t.Fatalf("%d deletes of a pod nobody deleted", n)
	}
}

func TestDeleteOfVanishedPodIsSuccess(t *testing.T) {
	pod := apiPod("p1", "u1")
	gone := metav1.NewTime(time.Now())
	pod.DeletionTimestamp = &gone
	e := start(t, nil, object(pod))
	e.api.deleteNotFound.Store(true)
	before := deletesGone.Get()
	e.store.Set(pod, podStatus(v1.PodFailed, false, time.Now()))
	e.m.Terminated("u1")
	eventually(t, "the delete", func() bool { return deletesGone.Get() == before+1 })
	settle()
	if n := len(e.api.actions("delete")); n != 1 {
		t.Fatalf("%d deletes, want 1: not found is success, not a reason to retry", n)
	}
}

func TestGonePodStopsTracking(t *testing.T) {
	// p1 is not in the API server; p2's name belongs to another pod.
	other := object(apiPod("p2", "someone-else"))
	e := start(t, nil, other)
	p1, p2 := apiPod("p1", "u1"), apiPod("p2", "u2")
	before := patchesGone.Get()
	e.store.Set(p1, podStatus(v1.PodRunning, true, time.Now()))
	e.store.Set(p2, podStatus(v1.PodRunning, true, time.Now()))
	eventually(t, "both found gone", func() bool { return patchesGone.Get() == before+2 })

	requests := len(e.api.Actions())
	e.store.Set(p1, podStatus(v1.PodFailed, false, time.Now()))
	settle()
	if n := len(e.api.Actions()); n != requests {
		t.Fatalf("%d more requests for a pod known to be gone", n-requests)
	}
	if n := len(e.api.actions("patch")); n != 0 {
		t.Fatalf("%d patches; the other pod named p2 must be left alone", n)
	}
	if ph := e.apiStatus(t, "ns", "p2").Phase; ph != "" {
		t.Fatalf("another pod's status was changed to %q", ph)
	}

	e.store.Delete("u1")
	eventually(t, "forgotten", func() bool {
		e.m.mu.Lock()
		defer e.m.mu.Unlock()
		_, ok := e.m.pods["u1"]
		return !ok
	})
}

func TestReplacedPodIsNotPatched(t *testing.T) {
	pod := apiPod("p1", "u1")
	e := start(t, nil, object(pod))
	e.store.Set(pod, podStatus(v1.PodPending, false, time.Now()))
	eventually(t, "first status", func() bool { return e.apiStatus(t, "ns", "p1").Phase == v1.PodPending })

	// The pod is deleted and another one takes its name.
	if err := e.api.Tracker().Delete(podsGVR, "ns", "p1"); err != nil {
		t.Fatal(err)
	}
	if err := e.api.Tracker().Add(object(apiPod("p1", "u-new"))); err != nil {
		t.Fatal(err)
	}
	before := patchesGone.Get()
	e.store.Set(pod, podStatus(v1.PodRunning, true, time.Now()))
	eventually(t, "found gone", func() bool { return patchesGone.Get() == before+1 })
	if ph := e.apiStatus(t, "ns", "p1").Phase; ph != "" {
		t.Fatalf("the new pod got the old pod's phase %q", ph)
	}
}

func TestResyncSendsWhatNotifyMissed(t *testing.T) {
	pod := apiPod("p1", "u1")
	e := start(t, func(c *Config) { c.Resync = 10 * time.Millisecond }, object(pod))
	e.store.Set(pod, podStatus(v1.PodPending, false, time.Now()))
	eventually(t, "first status", func() bool { return e.apiStatus(t, "ns", "p1").Phase == v1.PodPending })

	e.store.OnChange(nil) // a lost notification
	e.store.Set(pod, podStatus(v1.PodRunning, true, time.Now()))
	eventually(t, "resync", func() bool { return e.apiStatus(t, "ns", "p1").Phase == v1.PodRunning })
}

func TestReadinessGateFlipsReady(t *testing.T) {
	pod := apiPod("p1", "u1")
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "example.com/lb"}}
	obj := object(pod)
	obj.Status.Conditions = []v1.PodCondition{{Type: "example.com/lb", Status: v1.ConditionFalse}}
	e := start(t, func(c *Config) { c.Resync = 10 * time.Millisecond }, obj)

	readyIs := func(want v1.ConditionStatus) func() bool {
		return func() bool {
			c := condition(e.apiStatus(t, "ns", "p1"), v1.PodReady)
			return c != nil && c.Status == want
		}
	}
	e.store.Set(pod, podStatus(v1.PodRunning, true, time.Now()))
	eventually(t, "Ready false while the gate is false", readyIs(v1.ConditionFalse))

	// A load balancer controller sets its condition; nothing changes on
	// the node, the resync picks it up.
	cur, _ := e.api.pod("ns", "p1")
	cur = cur.DeepCopy()
	cur.Status.Conditions[0].Status = v1.ConditionTrue
	if err := e.api.Tracker().Update(podsGVR, cur, "ns"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "Ready true once the gate is", readyIs(v1.ConditionTrue))
}

func TestRejectedStatusIsNotRetried(t *testing.T) {
	pod := apiPod("p1", "u1")
	e := start(t, nil, object(pod))
	e.api.reject.Store(true)
	before := patchesError.Get()
	e.store.Set(pod, podStatus(v1.PodPending, false, time.Now()))
	eventually(t, "the rejection", func() bool { return patchesError.Get() == before+1 })
	settle()
	if n := len(e.api.actions("patch")); n != 1 {
		t.Fatalf("%d patches: an invalid status was sent again", n)
	}

	// A newer status is another matter.
	e.api.reject.Store(false)
	e.store.Set(pod, podStatus(v1.PodRunning, true, time.Now()))
	eventually(t, "the newer status", func() bool { return e.apiStatus(t, "ns", "p1").Phase == v1.PodRunning })
}

// Statuses that failed during an outage land once the API server answers
// again, not when each pod's back-off ends: here the back-off is an hour,
// so only the outage probe and the resync it triggers can send them.
func TestOutageEndsWithoutWaitingOutTheBackoff(t *testing.T) {
	e := start(t, func(c *Config) {
		c.RetryBase, c.RetryMax, c.OutageProbe = time.Hour, time.Hour, 10*time.Millisecond
	}, object(apiPod("a", "ua")), object(apiPod("b", "ub")), object(apiPod("c", "uc")))
	e.api.down.Store(true)
	failed := patchesError.Get()
	now := time.Now()
	for _, n := range []string{"a", "b", "c"} {
		e.store.Set(apiPod(n, types.UID("u"+n)), podStatus(v1.PodRunning, true, now))
	}
	eventually(t, "the first failures", func() bool { return patchesError.Get() >= failed+3 })
	e.api.down.Store(false)
	eventually(t, "every status after the outage", func() bool {
		for _, n := range []string{"a", "b", "c"} {
			if e.apiStatus(t, "ns", n).Phase != v1.PodRunning {
				return false
			}
		}
		return true
	})
}
