package podspec

import (
	"fmt"
	"maps"
	"slices"

	v1 "k8s.io/api/core/v1"
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
			if name := ef.Prefix + k; len(CheckEnvVarName(name)) == 0 {
				set(name, string(data[k]))
			}
		}
	}
	for _, e := range spec.Env {
		if e.ValueFrom == nil {
			set(e.Name, expandRefs(e.Value, lookup))
			continue
		}
		val, ok, err := envSourceValue(pod, spec, e.ValueFrom, objs, podIPs, node)
		if err != nil {
			if src, srcErr := EnvSourceOf(e.ValueFrom); srcErr == nil && objs != nil && (src == ConfigMapKeyRef || src == SecretKeyRef) {
				// The kubelet's words, which name the object and key.
				return nil, ConfigError(err)
			}
			return nil, configErrorf("env %s: %v", e.Name, err)
		}
		if ok {
			set(e.Name, val)
		}
	}
	return out, nil
}

// envSourceValue resolves one valueFrom; ok is false when an optional
// reference resolves to nothing. What resolves here is what validation
// accepts: both go through podspec.
func envSourceValue(pod *v1.Pod, spec *v1.Container, vf *v1.EnvVarSource, objs *EnvObjects, podIPs []string, node *Node) (val string, ok bool, err error) {
	src, err := EnvSourceOf(vf)
	if err != nil {
		return "", false, err
	}
	switch src {
	case FieldRef:
		val, err = FieldValue(pod, vf.FieldRef.FieldPath, InEnv,
			Addresses{PodIPs: podIPs, HostIPs: node.IPs})
		return val, err == nil, err
	case ResourceFieldRef:
		val, err = resourceFieldValue(pod, spec, vf.ResourceFieldRef, node)
		return val, err == nil, err
	}
	return keyRefValue(pod.Namespace, vf, objs)
}

// resourceFieldValue reads the resources of the container the reference
// names, this one when it names none.
func resourceFieldValue(pod *v1.Pod, spec *v1.Container, ref *v1.ResourceFieldSelector, node *Node) (string, error) {
	c := spec
	if ref.ContainerName != "" && ref.ContainerName != spec.Name {
		if c = findContainer(pod, ref.ContainerName); c == nil {
			return "", fmt.Errorf("resourceFieldRef %q: no container %q in the pod", ref.Resource, ref.ContainerName)
		}
	}
	return ResourceFieldValue(pod, c, ref, node.Allocatable)
}

func findContainer(pod *v1.Pod, name string) *v1.Container {
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
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
		return nil, configErrorf("envFrom %s %q: configMaps and secrets need an API server", kind, name)
	}
	data := from[name]
	if data == nil && !opt {
		return nil, configErrorf("%s %q not found", kind, name)
	}
	return data, nil
}

// keyRefValue resolves a configMapKeyRef or secretKeyRef; ok is false when
// an optional reference resolves to nothing.
func keyRefValue(namespace string, src *v1.EnvVarSource, objs *EnvObjects) (val string, ok bool, err error) {
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
		// The kubelet's words: the kind capitalized, namespace/name.
		kindName := "ConfigMap"
		if kind == "secret" {
			kindName = "Secret"
		}
		return "", false, fmt.Errorf("couldn't find key %s in %s %s/%s", key, kindName, namespace, name)
	}
	return string(v), true, nil
}
