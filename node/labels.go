package node

import (
	"fmt"
	"maps"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	kubeletapis "k8s.io/kubelet/pkg/apis"
)

// ParseLabels reads --node-labels: "key=value,key2=value2". A key with no
// "=" gets the empty value and empty items are skipped, as the kubelet's
// flag does. Keys and values must be valid label keys and values, and a key
// in the kubernetes.io or k8s.io namespaces must be one a node may set on
// itself: the NodeRestriction admission plugin refuses the others (a node
// must not be able to steer privileged workloads to itself), so such a label
// would only make registration fail later.
func ParseLabels(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, item := range strings.Split(s, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		k, v, _ := strings.Cut(item, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return nil, fmt.Errorf("label %q: bad key: %s", item, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("label %q: bad value: %s", item, strings.Join(errs, "; "))
		}
		if isKubernetesLabel(k) && !kubeletapis.IsKubeletLabel(k) {
			return nil, fmt.Errorf("label %q: a node may not set %s on itself: keys in the kubernetes.io and k8s.io namespaces "+
				"must begin with %s or be one of %s (node-role.kubernetes.io/ labels are set by an administrator with kubectl)",
				item, k, strings.Join(suffixed(kubeletapis.KubeletLabelNamespaces(), "/"), " or "),
				strings.Join(kubeletapis.KubeletLabels(), ", "))
		}
		out[k] = v
	}
	return out, nil
}

// isKubernetesLabel says whether key is in the kubernetes.io or k8s.io
// namespaces, or a subdomain of them.
func isKubernetesLabel(key string) bool {
	prefix, _, ok := strings.Cut(key, "/")
	if !ok {
		return false
	}
	for _, ns := range []string{"kubernetes.io", "k8s.io"} {
		if prefix == ns || strings.HasSuffix(prefix, "."+ns) {
			return true
		}
	}
	return false
}

func suffixed(ss []string, suffix string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s + suffix
	}
	sort.Strings(out)
	return out
}

// Labels are the labels a Node registers with: the well-known ones for
// hostname, then extra (--node-labels) over them. Admission matches pods'
// nodeSelector against the same set.
func Labels(hostname string, extra map[string]string) map[string]string {
	l := defaultLabels(hostname)
	maps.Copy(l, extra)
	return l
}

// defaultLabels are the labels the kubelet puts on its Node and keeps
// current on an existing one; the node authorizer lets a node set each.
func defaultLabels(hostname string) map[string]string {
	return map[string]string{
		v1.LabelHostname:      hostname,
		v1.LabelOSStable:      goos,
		v1.LabelArchStable:    goarch,
		kubeletapis.LabelOS:   goos,
		kubeletapis.LabelArch: goarch,
	}
}
