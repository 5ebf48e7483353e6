package stages

import (
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// containerEnv resolves the container's environment in order: later
// values may refer to earlier ones as $(NAME).
func containerEnv(pod *v1.Pod, spec *v1.Container, podIPs []string, node *Node) ([]*runtimeapi.KeyValue, error) {
	var out []*runtimeapi.KeyValue
	vals := make(map[string]string, len(spec.Env))
	lookup := func(name string) (string, bool) {
		v, ok := vals[name]
		return v, ok
	}
	for _, ef := range spec.EnvFrom {
		if !optional(ef.ConfigMapRef, ef.SecretRef) {
			return nil, fmt.Errorf("%w: envFrom: configMaps and secrets need an API server", ErrConfig)
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
		case isOptionalKeyRef(e.ValueFrom):
			continue
		default:
			return nil, fmt.Errorf("%w: env %s: configMap and secret references need an API server", ErrConfig, e.Name)
		}
		vals[e.Name] = val
		out = append(out, &runtimeapi.KeyValue{Key: e.Name, Value: []byte(val)})
	}
	return out, nil
}

func optional(cm *v1.ConfigMapEnvSource, s *v1.SecretEnvSource) bool {
	if cm != nil && (cm.Optional == nil || !*cm.Optional) {
		return false
	}
	if s != nil && (s.Optional == nil || !*s.Optional) {
		return false
	}
	return true
}

func isOptionalKeyRef(src *v1.EnvVarSource) bool {
	if r := src.ConfigMapKeyRef; r != nil {
		return r.Optional != nil && *r.Optional
	}
	if r := src.SecretKeyRef; r != nil {
		return r.Optional != nil && *r.Optional
	}
	return false
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
