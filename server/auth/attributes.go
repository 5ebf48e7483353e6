package auth

import (
	"net/http"
	"path"
	"strings"
)

// Attributes is one question for an Authorizer: may User do Verb on the
// Subresource of node Name? Requests to the node API are asked about as
// the apiserver's node proxy would be, so that RBAC rules on nodes/stats,
// nodes/proxy and the like govern both the same way.
type Attributes struct {
	User        *User
	Verb        string
	Namespace   string // always "": nodes are cluster-scoped
	APIGroup    string // always "": the core group
	APIVersion  string
	Resource    string
	Subresource string
	Name        string
	// Path is the cleaned request path, for logs; it is not part of the
	// question.
	Path string
}

// subresourceRule maps requests under a path prefix to a subresource.
type subresourceRule struct {
	prefix      string
	subresource string
	// fallback adds a proxy question after the specific one: a caller
	// granted only nodes/proxy, as every caller was before the specific
	// subresource existed, keeps its access.
	fallback bool
}

// subresourceRules are the kubelet's (pkg/kubelet/server/auth.go, with
// KubeletFineGrainedAuthz on, its default since 1.33); any path not
// matched here is "proxy". /spec/ has no rule: the kubelet authorizes it as
// proxy, whatever some of its documentation once said.
var subresourceRules = []subresourceRule{
	{"/pods", "pods", true},
	{"/runningpods", "pods", true},
	{"/healthz", "healthz", true},
	{"/configz", "configz", true},
	{"/statusz", "statusz", true},
	{"/stats", "stats", false},
	{"/metrics", "metrics", false},
	{"/logs", "log", false}, // "log", as pods/log is named
	{"/checkpoint", "checkpoint", false},
}

// streamingPrefixes run or reach into a process in a container. Podline
// asks for verb create on them whatever the method (see the package doc).
var streamingPrefixes = []string{"/exec", "/attach", "/portForward", "/run"}

// RequestAttributes returns the questions that decide r, in order: r is
// allowed if the authorizer allows any of them. All share user, verb and
// node and differ only in subresource.
func RequestAttributes(u *User, r *http.Request, nodeName string) []Attributes {
	p := cleanPath(r.URL.Path)
	verb := apiVerb(r.Method)
	for _, prefix := range streamingPrefixes {
		if under(p, prefix) {
			verb = "create"
		}
	}
	subs := subresourcesOf(p)
	attrs := make([]Attributes, 0, len(subs))
	for _, sub := range subs {
		attrs = append(attrs, Attributes{
			User:        u,
			Verb:        verb,
			APIVersion:  "v1",
			Resource:    "nodes",
			Subresource: sub,
			Name:        nodeName,
			Path:        p,
		})
	}
	return attrs
}

func subresourcesOf(p string) []string {
	for _, rule := range subresourceRules {
		if !under(p, rule.prefix) {
			continue
		}
		if rule.fallback {
			return []string{rule.subresource, "proxy"}
		}
		return []string{rule.subresource}
	}
	return []string{"proxy"}
}

// apiVerb maps the HTTP method as the kubelet does, and HEAD as the GET it
// is. Other methods get no verb, as on the kubelet: only a rule granting
// every verb ("*") allows them.
func apiVerb(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead:
		return "get"
	case http.MethodPost:
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}

// cleanPath resolves "." and ".." and repeated slashes, so that a request
// is judged by the path it reaches: /stats/../exec is exec, not stats.
func cleanPath(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return path.Clean(p)
}

// under reports whether p is prefix or below it; /podsX is not under
// /pods.
func under(p, prefix string) bool {
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}
