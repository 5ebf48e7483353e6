package volumes

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

// podShowing is a pod of namespace shop with a configMap volume of each
// name in cms.
func podShowing(i int, cms ...string) *v1.Pod {
	pod := testPod()
	pod.Name = fmt.Sprintf("web-%d", i)
	pod.UID = types.UID(fmt.Sprintf("uid-%d", i))
	for _, cm := range cms {
		pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: cm, VolumeSource: v1.VolumeSource{
			ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: cm}},
		}})
	}
	return pod
}

// setUpAll sets every volume of pod up under base, as the volume stage
// does, with the mark Stale gave.
func setUpAll(t *testing.T, s *Source, pod *v1.Pod, base string) {
	t.Helper()
	mark, _ := s.Stale(pod)
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if err := s.SetUp(context.Background(), pod, vol, filepath.Join(base, string(pod.UID), vol.Name)); err != nil {
			t.Fatal(err)
		}
	}
	s.Refreshed(pod.UID, mark)
}

// However many pods show the same objects, reading them costs one list and
// one watch per object: the requests stay flat as pods grow, none follow
// per period, and a change reaches every pod that shows it with no
// request at all.
func TestAPIReadsStayFlatAsPodsGrow(t *testing.T) {
	var counts []string
	for _, n := range []int{1, 10, 100, 1000} {
		cs := fake.NewClientset(
			configMap("shop", "shared", map[string]string{"k": "v1"}, nil),
			configMap("shop", "kube-root-ca.crt", map[string]string{"ca.crt": "CA"}, nil))
		s := startSource(t, cs, nil)
		passes := &staleLog{}
		s.OnStale(passes.add)
		base := t.TempDir()
		pods := make([]*v1.Pod, n)
		for i := range pods {
			pods[i] = podShowing(i, "shared", "kube-root-ca.crt")
			setUpAll(t, s, pods[i], base)
		}
		waitWatches(t, cs, "configmaps", 2)
		atSetup := apiReads(cs)

		if _, err := cs.CoreV1().ConfigMaps("shop").Update(context.Background(),
			configMap("shop", "shared", map[string]string{"k": "v2"}, nil), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		asked := passes.wait(t, n)
		for _, pod := range pods {
			if !slices.Contains(asked, pod.UID) {
				t.Fatalf("%d pods: no pass asked for %s", n, pod.UID)
			}
			if _, stale := s.Stale(pod); !stale {
				t.Fatalf("%d pods: %s not stale", n, pod.UID)
			}
			setUpAll(t, s, pod, base)
			if got := contents(t, filepath.Join(base, string(pod.UID), "shared"))["k"]; got != "v2" {
				t.Fatalf("%d pods: %s reads %q after the change", n, pod.UID, got)
			}
		}
		afterChange := apiReads(cs)
		counts = append(counts, fmt.Sprintf("%d pods: %d reads to set up, %d after a change", n, atSetup, afterChange))
		if atSetup != 4 || afterChange != atSetup {
			t.Errorf("%d pods: %d API reads to set up, %d after a change; want 4 (a list and a watch per object) and no more", n, atSetup, afterChange)
		}
		if got := s.objects.Watched(); got != 2 {
			t.Errorf("%d pods: %d objects watched, want 2", n, got)
		}
		for _, pod := range pods {
			s.Release(pod.UID)
		}
		if got := s.objects.Watched(); got != 0 {
			t.Errorf("%d pods released: %d objects still watched", n, got)
		}
	}
	for _, c := range counts {
		t.Log(c)
	}
}

// A change reaches only the pods that show the object; a pod released
// hears of nothing, and the last user's release closes the watch.
func TestObjectChangeReachesItsPodsOnly(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(
		configMap("shop", "a", map[string]string{"k": "1"}, nil),
		configMap("shop", "b", map[string]string{"k": "1"}, nil))
	s := startSource(t, cs, nil)
	passes := &staleLog{}
	s.OnStale(passes.add)
	base := t.TempDir()
	showsA, showsB, showsBoth := podShowing(1, "a"), podShowing(2, "b"), podShowing(3, "a", "b")
	for _, p := range []*v1.Pod{showsA, showsB, showsBoth} {
		setUpAll(t, s, p, base)
	}
	waitWatches(t, cs, "configmaps", 2)
	update := func(name, value string) {
		t.Helper()
		if _, err := cs.CoreV1().ConfigMaps("shop").Update(ctx, configMap("shop", name, map[string]string{"k": value}, nil), metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	update("b", "2")
	got := passes.wait(t, 2)
	slices.Sort(got)
	if !slices.Equal(got, []types.UID{showsB.UID, showsBoth.UID}) {
		t.Fatalf("a change of b asked passes for %v", got)
	}
	if _, stale := s.Stale(showsA); stale {
		t.Fatal("a pod that does not show b is stale")
	}

	// Labels alone are no change of what a volume shows.
	cm, _ := cs.CoreV1().ConfigMaps("shop").Get(ctx, "a", metav1.GetOptions{})
	cm.Labels = map[string]string{"x": "y"}
	if _, err := cs.CoreV1().ConfigMaps("shop").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.Release(showsA.UID)
	update("a", "2")
	got = passes.wait(t, 3)
	if got[2] != showsBoth.UID || passes.len() != 3 {
		t.Fatalf("passes asked for %v: want one more, for %s alone", got, showsBoth.UID)
	}
	s.Release(showsBoth.UID)
	if w := s.objects.Watched(); w != 1 {
		t.Fatalf("%d objects watched, want 1 (b, for %s)", w, showsB.UID)
	}
}

// A deleted object fails the refresh (the files stay as they were); its
// return brings the pod a pass and the content back.
func TestDeletedObjectComesBack(t *testing.T) {
	ctx := context.Background()
	cs := fake.NewClientset(configMap("shop", "a", map[string]string{"k": "1"}, nil))
	s := startSource(t, cs, nil)
	passes := &staleLog{}
	s.OnStale(passes.add)
	base := t.TempDir()
	pod := podShowing(1, "a")
	setUpAll(t, s, pod, base)
	waitWatches(t, cs, "configmaps", 1)
	if err := cs.CoreV1().ConfigMaps("shop").Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	passes.wait(t, 1)
	dir := filepath.Join(base, string(pod.UID), "a")
	wantErr(t, s.SetUp(ctx, pod, &pod.Spec.Volumes[0], dir), ErrNotFound, `configmap "a" not found`)
	if got := contents(t, dir)["k"]; got != "1" {
		t.Fatalf("a failed refresh changed the files: %q", got)
	}
	if _, err := cs.CoreV1().ConfigMaps("shop").Create(ctx, configMap("shop", "a", map[string]string{"k": "2"}, nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	passes.wait(t, 2)
	setUpAll(t, s, pod, base)
	if got := contents(t, dir)["k"]; got != "2" {
		t.Fatalf("after the object came back: %q", got)
	}
}
