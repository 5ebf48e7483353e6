package kubeapi

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metrics"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Requests through the clients show up in podline's metrics, by method
// and status code.
func TestClientRequestsAreCounted(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`, http.StatusNotFound)
	}))
	defer srv.Close()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: " + srv.URL + "}}]\n" +
		"contexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\nusers: [{name: u, user: {}}]\n"
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	clients, err := NewClients(Config{Kubeconfig: kubeconfig, QPS: 50, Burst: 100}, 50, 100)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := clients.Pods.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{}); err == nil {
			t.Fatal("want a 404")
		}
	}
	var buf bytes.Buffer
	metrics.WritePrometheus(&buf, false)
	if !strings.Contains(buf.String(), `podline_api_requests_total{method="GET",code="404"} 3`) {
		t.Fatalf("no count of the three GETs in:\n%s", grep(buf.String(), "podline_api_requests_total"))
	}
	if !strings.Contains(buf.String(), `podline_api_request_duration_seconds_bucket{verb="GET"`) {
		t.Fatal("no GET latency histogram")
	}
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
