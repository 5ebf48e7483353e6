package stages

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// containerEnv resolves the container's environment in order: envFrom,
// then env; a later value replaces an earlier one of the same name, and
// may refer to earlier ones as $(NAME). objs holds the configMaps and
// secrets referred to (nil without an API server).
func containerEnv(pod *v1.Pod, spec *v1.Container, objs *EnvObjects, podIPs []string, node *Node) ([]*runtimeapi.KeyValue, error) {
	var out []*runtimeapi.KeyValue
	index := make(map[string]int, len(spec.Env))
	set := func(name, val string) {
		if i, ok := index[name]; ok {
			out[i].Value = []byte(val)
			return
		}
		index[name] = len(out)
		out = append(out, &runtimeapi.KeyValue{Key: name, Value: []byte(val)})
	}
	lookup := func(name string) (string, bool) {
		if i, ok := index[name]; ok {
			return string(out[i].Value), true
		}
		return "", false
	}
	if objs != nil {
		// Lowest precedence: envFrom and env replace these.
		for _, e := range serviceEnv(pod, objs.Services) {
			set(e.Name, e.Value)
		}
	}
	for _, ef := range spec.EnvFrom {
		data, err := envFromData(&ef, objs)
		if err != nil {
			return nil, err
		}
		keys := slices.Sorted(maps.Keys(data))
		for _, k := range keys {
			// The kubelet skips keys that are no variable names, too.
			if name := ef.Prefix + k; len(validation.IsEnvVarName(name)) == 0 {
				set(name, string(data[k]))
			}
		}
	}
	for _, e := range spec.Env {
		var val string
		switch {
		case e.ValueFrom == nil:
			val = expandRefs(e.Value, lookup)
		case e.ValueFrom.FieldRef != nil:
			v, err := fieldRefValue(pod, e.ValueFrom.FieldRef.FieldPath, podIPs, node)
			if err != nil {
				return nil, fmt.Errorf("%w: env %s: %v", ErrConfig, e.Name, err)
			}
			val = v
		case e.ValueFrom.ResourceFieldRef != nil:
			v, err := resourceFieldValue(spec, e.ValueFrom.ResourceFieldRef, node)
			if err != nil {
				return nil, fmt.Errorf("%w: env %s: %v", ErrConfig, e.Name, err)
			}
			val = v
		default:
			v, ok, err := keyRefValue(e.ValueFrom, objs)
			if err != nil {
				return nil, fmt.Errorf("%w: env %s: %v", ErrConfig, e.Name, err)
			}
			if !ok {
				continue
			}
			val = v
		}
		set(e.Name, val)
	}
	return out, nil
}

// envFromData is what one envFrom entry brings: nil for a missing
// optional object.
func envFromData(ef *v1.EnvFromSource, objs *EnvObjects) (map[string][]byte, error) {
	kind, name, opt, from := "configmap", "", false, map[string]map[string][]byte(nil)
	switch {
	case ef.ConfigMapRef != nil:
		name, opt = ef.ConfigMapRef.Name, isTrue(ef.ConfigMapRef.Optional)
		if objs != nil {
			from = objs.ConfigMaps
		}
	case ef.SecretRef != nil:
		kind, name, opt = "secret", ef.SecretRef.Name, isTrue(ef.SecretRef.Optional)
		if objs != nil {
			from = objs.Secrets
		}
	default:
		return nil, nil
	}
	if objs == nil {
		if opt {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: envFrom %s %q: configMaps and secrets need an API server", ErrConfig, kind, name)
	}
	data := from[name]
	if data == nil && !opt {
		return nil, fmt.Errorf("%w: envFrom: %s %q not found", ErrConfig, kind, name)
	}
	return data, nil
}

// keyRefValue resolves a configMapKeyRef or secretKeyRef; ok is false when
// an optional reference resolves to nothing.
func keyRefValue(src *v1.EnvVarSource, objs *EnvObjects) (val string, ok bool, err error) {
	var kind, name, key string
	var opt bool
	var from map[string]map[string][]byte
	switch {
	case src.ConfigMapKeyRef != nil:
		r := src.ConfigMapKeyRef
		kind, name, key, opt = "configmap", r.Name, r.Key, isTrue(r.Optional)
		if objs != nil {
			from = objs.ConfigMaps
		}
	case src.SecretKeyRef != nil:
		r := src.SecretKeyRef
		kind, name, key, opt = "secret", r.Name, r.Key, isTrue(r.Optional)
		if objs != nil {
			from = objs.Secrets
		}
	default:
		return "", false, fmt.Errorf("unsupported value source")
	}
	if objs == nil {
		if opt {
			return "", false, nil
		}
		return "", false, fmt.Errorf("%s %q: configMaps and secrets need an API server", kind, name)
	}
	data := from[name]
	if data == nil {
		if opt {
			return "", false, nil
		}
		return "", false, fmt.Errorf("%s %q not found", kind, name)
	}
	v, found := data[key]
	if !found {
		if opt {
			return "", false, nil
		}
		return "", false, fmt.Errorf("couldn't find key %s in %s %q", key, kind, name)
	}
	return string(v), true, nil
}

// fieldRefValue resolves a downward-API field path.
func fieldRefValue(pod *v1.Pod, path string, podIPs []string, node *Node) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.podIP":
		if len(podIPs) > 0 {
			return podIPs[0], nil
		}
		return "", nil
	case "status.podIPs":
		return strings.Join(podIPs, ","), nil
	case "status.hostIP":
		return node.HostIP(), nil
	case "status.hostIPs":
		return strings.Join(node.IPs, ","), nil
	}
	for prefix, m := range map[string]map[string]string{"metadata.labels": pod.Labels, "metadata.annotations": pod.Annotations} {
		if key, ok := strings.CutPrefix(path, prefix+"['"); ok && strings.HasSuffix(key, "']") {
			return m[strings.TrimSuffix(key, "']")], nil
		}
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// resourceFieldValue resolves limits.cpu, requests.memory and friends.
// An unset limit reads as the node's allocatable, an unset request as 0,
// as in Kubernetes.
func resourceFieldValue(spec *v1.Container, ref *v1.ResourceFieldSelector, node *Node) (string, error) {
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("unsupported resourceFieldRef %q", ref.Resource)
	}
	list := spec.Resources.Limits
	if kind == "requests" {
		list = spec.Resources.Requests
	}
	q, set := list[v1.ResourceName(name)]
	if !set && kind == "requests" {
		return "0", nil
	}
	if !set {
		switch name {
		case "cpu":
			q = *resource.NewMilliQuantity(node.CPUMilli, resource.DecimalSI)
		case "memory":
			q = *resource.NewQuantity(node.MemoryBytes, resource.BinarySI)
		case "ephemeral-storage":
			q = resource.Quantity{}
		default:
			return "", fmt.Errorf("unsupported resourceFieldRef %q", ref.Resource)
		}
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = *resource.NewQuantity(1, resource.DecimalSI)
	}
	if name == "cpu" {
		// Rounded up: a container never sees fewer cores than it has.
		m, d := q.MilliValue(), divisor.MilliValue()
		return strconv.FormatInt((m+d-1)/d, 10), nil
	}
	v, d := q.Value(), divisor.Value()
	return strconv.FormatInt((v+d-1)/d, 10), nil
}
