package podspec

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Reader is who reads a downward API field: an environment variable or a
// downwardAPI volume file. The API server allows each its own set.
type Reader uint8

const (
	InEnv Reader = 1 << iota
	InVolume
)

func (r Reader) String() string {
	if r == InVolume {
		return "a volume"
	}
	return "an environment variable"
}

// Addresses are what the status fields read, primary first.
type Addresses struct {
	PodIPs, HostIPs []string
}

type podField struct {
	readers Reader
	value   func(pod *v1.Pod, a Addresses) string
}

// podFields is every plain field path podline resolves and who may name
// it. CheckFieldPath and FieldValue both read this table, so a path passes
// validation exactly when it resolves.
var podFields = map[string]podField{
	"metadata.name":      {InEnv | InVolume, func(p *v1.Pod, _ Addresses) string { return p.Name }},
	"metadata.namespace": {InEnv | InVolume, func(p *v1.Pod, _ Addresses) string { return p.Namespace }},
	"metadata.uid":       {InEnv | InVolume, func(p *v1.Pod, _ Addresses) string { return string(p.UID) }},
	// A whole map only fits a file.
	"metadata.labels":         {InVolume, func(p *v1.Pod, _ Addresses) string { return formatMap(p.Labels) }},
	"metadata.annotations":    {InVolume, func(p *v1.Pod, _ Addresses) string { return formatMap(p.Annotations) }},
	"spec.nodeName":           {InEnv, func(p *v1.Pod, _ Addresses) string { return p.Spec.NodeName }},
	"spec.serviceAccountName": {InEnv, func(p *v1.Pod, _ Addresses) string { return p.Spec.ServiceAccountName }},
	"status.hostIP":           {InEnv, func(_ *v1.Pod, a Addresses) string { return first(a.HostIPs) }},
	"status.hostIPs":          {InEnv, func(_ *v1.Pod, a Addresses) string { return strings.Join(a.HostIPs, ",") }},
	"status.podIP":            {InEnv, func(_ *v1.Pod, a Addresses) string { return first(a.PodIPs) }},
	"status.podIPs":           {InEnv, func(_ *v1.Pod, a Addresses) string { return strings.Join(a.PodIPs, ",") }},
}

type mapField struct {
	checkKey func(key string) []string
	get      func(pod *v1.Pod) map[string]string
}

// mapFields are the maps a path may index, metadata.labels['app'], in
// either reader. A key is checked as the API server checks one, so a key
// that could never exist is an error, not an empty value.
var mapFields = map[string]mapField{
	"metadata.labels": {validation.IsQualifiedName, func(p *v1.Pod) map[string]string { return p.Labels }},
	"metadata.annotations": {
		func(k string) []string { return validation.IsQualifiedName(strings.ToLower(k)) },
		func(p *v1.Pod) map[string]string { return p.Annotations },
	},
}

// FieldPaths lists the paths r may name, indexed ones as
// metadata.labels['<KEY>'], sorted: what an error offers instead.
func FieldPaths(r Reader) []string {
	var out []string
	for path, f := range podFields {
		if f.readers&r != 0 {
			out = append(out, path)
		}
	}
	for path := range mapFields {
		out = append(out, path+"['<KEY>']")
	}
	slices.Sort(out)
	return out
}

// CheckFieldPath reports why r cannot read path: ErrUnsupported for a
// path podline does not resolve there, or an invalid key.
func CheckFieldPath(path string, r Reader) error {
	_, err := lookupField(path, r)
	return err
}

// FieldValue resolves path for r. A missing label or annotation reads as
// "".
func FieldValue(pod *v1.Pod, path string, r Reader, a Addresses) (string, error) {
	get, err := lookupField(path, r)
	if err != nil {
		return "", err
	}
	return get(pod, a), nil
}

func lookupField(path string, r Reader) (func(*v1.Pod, Addresses) string, error) {
	if f, ok := podFields[path]; ok && f.readers&r != 0 {
		return f.value, nil
	}
	if name, key, ok := indexed(path); ok {
		if m, ok := mapFields[name]; ok {
			if msgs := m.checkKey(key); len(msgs) > 0 {
				return nil, fmt.Errorf("key %q in %s: %s", key, name, strings.Join(msgs, "; "))
			}
			return func(p *v1.Pod, _ Addresses) string { return m.get(p)[key] }, nil
		}
	}
	return nil, fmt.Errorf("%w fieldRef %q in %s", ErrUnsupported, path, r)
}

// indexed splits "metadata.labels['app']" into "metadata.labels" and "app".
func indexed(path string) (name, key string, ok bool) {
	i := strings.Index(path, "['")
	if i < 0 || len(path) < i+4 || !strings.HasSuffix(path, "']") {
		return "", "", false
	}
	return path[:i], path[i+2 : len(path)-2], true
}

// formatMap writes one key="value" line per key, sorted, values quoted as
// Go strings: the format applications already parse on other nodes.
func formatMap(m map[string]string) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(m[k]))
	}
	return b.String()
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
