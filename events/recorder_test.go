package events

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestEventsReachTheAPI sends pod, container and node events through the
// real broadcaster into a fake clientset and checks what was created.
func TestEventsReachTheAPI(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset()
	r := New(ctx, client, "n1")
	defer r.Shutdown()

	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "u1"},
		Spec: v1.PodSpec{
			InitContainers: []v1.Container{{Name: "init"}},
			Containers:     []v1.Container{{Name: "app"}},
		},
	}
	r.PodEvent(pod, "app", v1.EventTypeNormal, "Started", "Started container app")
	r.PodEvent(pod, "init", v1.EventTypeNormal, "Created", "Created container: init")
	r.PodEvent(pod, "", v1.EventTypeWarning, "FailedMount", "MountVolume.SetUp failed")
	r.NodeEvent(v1.EventTypeWarning, "SystemOOM", "System OOM encountered, victim process: x, pid: 7")

	want := map[string]struct{ ns, kind, name, path string }{
		"Started":     {"ns", "Pod", "web", "spec.containers{app}"},
		"Created":     {"ns", "Pod", "web", "spec.initContainers{init}"},
		"FailedMount": {"ns", "Pod", "web", ""},
		"SystemOOM":   {"default", "Node", "n1", ""},
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		list, err := client.CoreV1().Events("").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) == len(want) {
			for _, ev := range list.Items {
				w, ok := want[ev.Reason]
				if !ok {
					t.Errorf("unexpected event %s", ev.Reason)
					continue
				}
				o := ev.InvolvedObject
				if ev.Namespace != w.ns || o.Kind != w.kind || o.Name != w.name || o.FieldPath != w.path {
					t.Errorf("%s: ns %q object %s/%s path %q, want %+v", ev.Reason, ev.Namespace, o.Kind, o.Name, o.FieldPath, w)
				}
				if ev.Source.Component != Component || ev.Source.Host != "n1" {
					t.Errorf("%s: source %+v", ev.Reason, ev.Source)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("got %d events, want %d", len(list.Items), len(want))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
