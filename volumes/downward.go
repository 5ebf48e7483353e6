package volumes

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// downwardPayload resolves each item of a downwardAPI volume (or
// projection) to a file.
func (s *Source) downwardPayload(pl payload, pod *v1.Pod, items []v1.DownwardAPIVolumeFile, defaultMode *int32) error {
	for _, it := range items {
		var val string
		var err error
		switch {
		case it.FieldRef != nil:
			val, err = fieldValue(pod, it.FieldRef.FieldPath)
		case it.ResourceFieldRef != nil:
			val, err = s.resourceValue(pod, it.ResourceFieldRef)
		default:
			err = fmt.Errorf("%w: neither fieldRef nor resourceFieldRef", ErrInvalid)
		}
		if err != nil {
			return fmt.Errorf("downwardAPI item %q: %w", it.Path, err)
		}
		if err := pl.add(it.Path, []byte(val), fileMode(it.Mode, defaultMode)); err != nil {
			return fmt.Errorf("downwardAPI: %w", err)
		}
	}
	return nil
}

// fieldValue resolves the field paths a downwardAPI volume may name.
// Whole label and annotation maps are one `key="value"` line per key,
// sorted, values quoted as Go strings: the format applications already
// parse on other nodes.
func fieldValue(pod *v1.Pod, fieldPath string) (string, error) {
	switch fieldPath {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "metadata.labels":
		return formatMap(pod.Labels), nil
	case "metadata.annotations":
		return formatMap(pod.Annotations), nil
	}
	for prefix, m := range map[string]map[string]string{"metadata.labels": pod.Labels, "metadata.annotations": pod.Annotations} {
		if key, ok := strings.CutPrefix(fieldPath, prefix+"['"); ok {
			if key, ok := strings.CutSuffix(key, "']"); ok && key != "" {
				return m[key], nil
			}
		}
	}
	return "", fmt.Errorf("%w: fieldRef %q in a volume", ErrUnsupported, fieldPath)
}

func formatMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(m[k]))
	}
	return b.String()
}

// resourceValue resolves limits.* and requests.* of one container,
// divided by the divisor and rounded up. An unset limit reads as the
// pod-level limit if the pod has one, else as the node's allocatable; an
// unset request reads as 0.
func (s *Source) resourceValue(pod *v1.Pod, ref *v1.ResourceFieldSelector) (string, error) {
	c := findContainer(pod, ref.ContainerName)
	if c == nil {
		return "", fmt.Errorf("%w: resourceFieldRef: no container %q", ErrInvalid, ref.ContainerName)
	}
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("%w: resourceFieldRef %q", ErrUnsupported, ref.Resource)
	}
	res := v1.ResourceName(name)
	if res != v1.ResourceCPU && res != v1.ResourceMemory && res != v1.ResourceEphemeralStorage && !strings.HasPrefix(name, v1.ResourceHugePagesPrefix) {
		return "", fmt.Errorf("%w: resourceFieldRef %q", ErrUnsupported, ref.Resource)
	}
	var q resource.Quantity
	if kind == "requests" {
		q = c.Resources.Requests[res]
	} else if l, set := c.Resources.Limits[res]; set {
		q = l
	} else if l, set := podLimits(pod)[res]; set {
		q = l
	} else if a, set := s.allocatable[res]; set {
		q = a
	} else {
		return "", fmt.Errorf("%w: resourceFieldRef %q: the container has no limit and the node's allocatable %s is unknown", ErrInvalid, ref.Resource, name)
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	if res == v1.ResourceCPU {
		return strconv.FormatInt(ceilDiv(q.MilliValue(), divisor.MilliValue()), 10), nil
	}
	return strconv.FormatInt(ceilDiv(q.Value(), divisor.Value()), 10), nil
}

func podLimits(pod *v1.Pod) v1.ResourceList {
	if pod.Spec.Resources == nil {
		return nil
	}
	return pod.Spec.Resources.Limits
}

func ceilDiv(a, b int64) int64 {
	if b <= 0 {
		return a
	}
	return (a + b - 1) / b
}

func findContainer(pod *v1.Pod, name string) *v1.Container {
	for _, list := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// downwardAPIVolume builds a downwardAPI volume's payload.
func (s *Source) downwardAPIVolume(pod *v1.Pod, src *v1.DownwardAPIVolumeSource) (payload, error) {
	pl := payload{}
	return pl, s.downwardPayload(pl, pod, src.Items, src.DefaultMode)
}
