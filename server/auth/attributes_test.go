package auth

import (
	"net/http/httptest"
	"slices"
	"testing"
)

func TestRequestAttributes(t *testing.T) {
	tests := []struct {
		method, path string
		verb         string
		subs         []string
	}{
		// Specific subresources, as the kubelet names them.
		{"GET", "/stats/summary", "get", []string{"stats"}},
		{"GET", "/stats", "get", []string{"stats"}},
		{"GET", "/stats/", "get", []string{"stats"}},
		{"GET", "/metrics", "get", []string{"metrics"}},
		{"GET", "/metrics/cadvisor", "get", []string{"metrics"}},
		{"GET", "/metrics/probes", "get", []string{"metrics"}},
		{"GET", "/metrics/resource", "get", []string{"metrics"}},
		{"GET", "/logs/syslog", "get", []string{"log"}},
		{"GET", "/logs/", "get", []string{"log"}},
		{"POST", "/checkpoint/ns/pod/c", "create", []string{"checkpoint"}},
		// Fine-grained, each with the proxy fallback after it.
		{"GET", "/pods", "get", []string{"pods", "proxy"}},
		{"GET", "/pods/", "get", []string{"pods", "proxy"}},
		{"GET", "/runningpods/", "get", []string{"pods", "proxy"}},
		{"GET", "/healthz", "get", []string{"healthz", "proxy"}},
		{"GET", "/healthz/ping", "get", []string{"healthz", "proxy"}},
		{"GET", "/configz", "get", []string{"configz", "proxy"}},
		{"GET", "/statusz", "get", []string{"statusz", "proxy"}},
		// Everything else is proxy; /spec/ too, as on the kubelet.
		{"GET", "/spec/", "get", []string{"proxy"}},
		{"GET", "/containerLogs/ns/pod/c", "get", []string{"proxy"}},
		{"GET", "/debug/pprof/", "get", []string{"proxy"}},
		{"GET", "/", "get", []string{"proxy"}},
		{"GET", "/podsX", "get", []string{"proxy"}},
		{"GET", "/statsfoo", "get", []string{"proxy"}},
		// Streaming: create whatever the method, so a WebSocket GET
		// needs what a POST needs.
		{"POST", "/exec/ns/pod/c", "create", []string{"proxy"}},
		{"GET", "/exec/ns/pod/c", "create", []string{"proxy"}},
		{"GET", "/attach/ns/pod/c", "create", []string{"proxy"}},
		{"GET", "/portForward/ns/pod", "create", []string{"proxy"}},
		{"POST", "/run/ns/pod/c", "create", []string{"proxy"}},
		{"GET", "/executor", "get", []string{"proxy"}},
		// The path is cleaned before it is judged.
		{"GET", "/stats/../exec/ns/pod/c", "create", []string{"proxy"}},
		{"GET", "/metrics/../../containerLogs/ns/pod/c", "get", []string{"proxy"}},
		{"GET", "/pods/../configz", "get", []string{"configz", "proxy"}},
		{"GET", "//stats//summary", "get", []string{"stats"}},
		{"GET", "/./logs/x", "get", []string{"log"}},
		// Verbs.
		{"HEAD", "/pods", "get", []string{"pods", "proxy"}},
		{"PUT", "/stats/x", "update", []string{"stats"}},
		{"PATCH", "/stats/x", "patch", []string{"stats"}},
		{"DELETE", "/stats/x", "delete", []string{"stats"}},
		{"OPTIONS", "/stats/x", "", []string{"stats"}},
	}
	u := &User{Name: "alice"}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, "http://node"+tt.path, nil)
		// httptest keeps the path as written; a client could send it so.
		r.URL.Path = tt.path
		attrs := RequestAttributes(u, r, "node-1")
		var subs []string
		for _, a := range attrs {
			subs = append(subs, a.Subresource)
			if a.User != u || a.Verb != tt.verb || a.Resource != "nodes" || a.Name != "node-1" ||
				a.APIGroup != "" || a.APIVersion != "v1" || a.Namespace != "" {
				t.Errorf("%s %s: attributes %+v, want verb %q on nodes/node-1", tt.method, tt.path, a, tt.verb)
			}
		}
		if !slices.Equal(subs, tt.subs) {
			t.Errorf("%s %s: subresources %v, want %v", tt.method, tt.path, subs, tt.subs)
		}
	}
}
