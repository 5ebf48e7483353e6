package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podline/podline/machine"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(body)
}

func TestHealthz(t *testing.T) {
	var broken error
	h := Healthz(
		Check{Name: "ping", Check: func() error { return nil }},
		Check{Name: "runtime", Check: func() error { return broken }},
	)
	f := func(path string, wantCode int, wantBody string) {
		t.Helper()
		code, body := get(t, h, path)
		if code != wantCode || !strings.Contains(body, wantBody) {
			t.Fatalf("GET %s = %d %q, want %d containing %q", path, code, body, wantCode, wantBody)
		}
	}
	f("/healthz", 200, "ok")
	f("/healthz?verbose", 200, "[+]runtime ok")
	broken = errors.New("socket gone")
	f("/healthz", 500, "[-]runtime failed: socket gone")
}

// With encoded items, /pods answers byte for byte what encoding the list
// whole answers, with none, one and several pods.
func TestReadOnlyPodsEncodedItems(t *testing.T) {
	for n := range 4 {
		var pods []v1.Pod
		for i := range n {
			pods = append(pods, v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i), Namespace: "default",
				Annotations: map[string]string{"a": "<&>"}}, Status: v1.PodStatus{Phase: v1.PodRunning}})
		}
		whole := &ReadOnly{Pods: func() []v1.Pod { return append(make([]v1.Pod, 0, len(pods)), pods...) }}
		encoded := &ReadOnly{Pods: func() []v1.Pod { t.Error("Pods called"); return nil }, PodsJSON: func() ([][]byte, error) {
			var items [][]byte
			for i := range pods {
				b, err := json.Marshal(&pods[i])
				if err != nil {
					return nil, err
				}
				items = append(items, b)
			}
			return items, nil
		}}
		_, want := get(t, whole.Handler(), "/pods")
		code, got := get(t, encoded.Handler(), "/pods")
		if code != 200 || got != want {
			t.Errorf("%d pods: /pods = %d\n%s\nwant\n%s", n, code, got, want)
		}
	}
	failing := &ReadOnly{PodsJSON: func() ([][]byte, error) { return nil, errors.New("encode pod ns/p: boom") }}
	if code, body := get(t, failing.Handler(), "/pods"); code != 500 || !strings.Contains(body, "encode pod ns/p: boom") {
		t.Errorf("failed encoding: /pods = %d %q", code, body)
	}
}

func TestReadOnlyPods(t *testing.T) {
	ro := &ReadOnly{
		Pods: func() []v1.Pod {
			return []v1.Pod{{ObjectMeta: metav1.ObjectMeta{Name: "a-node", Namespace: "default"},
				Status: v1.PodStatus{Phase: v1.PodRunning}}}
		},
		Machine: func() *machine.Info { return &machine.Info{NumCores: 2, MemoryCapacity: 1 << 30} },
	}
	h := ro.Handler()
	code, body := get(t, h, "/pods")
	if code != 200 {
		t.Fatalf("/pods = %d", code)
	}
	var list v1.PodList
	if err := json.Unmarshal([]byte(body), &list); err != nil {
		t.Fatal(err)
	}
	if list.Kind != "PodList" || list.APIVersion != "v1" || len(list.Items) != 1 || list.Items[0].Status.Phase != v1.PodRunning {
		t.Fatalf("/pods = %s", body)
	}
	code, body = get(t, h, "/spec/")
	if code != 200 || !strings.Contains(body, `"num_cores":2`) || !strings.Contains(body, `"memory_capacity":1073741824`) {
		t.Fatalf("/spec/ = %d %s", code, body)
	}
	if code, _ := get(t, h, "/nope"); code != 404 {
		t.Fatalf("unknown path = %d", code)
	}
}
