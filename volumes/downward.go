package volumes

import (
	"crypto/sha256"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/podspec"
)

// Downward API values come from podspec, the one resolver that container
// environments use too: a field or resource reads the same in a file as in
// a variable, and validation accepts exactly what resolves.

// downwardPayload resolves each item of a downwardAPI volume (or
// projection) to a file.
func (s *Source) downwardPayload(pl payload, pod *v1.Pod, items []v1.DownwardAPIVolumeFile, defaultMode *int32) error {
	for i := range items {
		it := &items[i]
		val, err := downwardValue(pod, it, s.allocatable)
		if err != nil {
			return fmt.Errorf("downwardAPI item %q: %w", it.Path, err)
		}
		if err := pl.add(it.Path, []byte(val), fileMode(it.Mode, defaultMode)); err != nil {
			return fmt.Errorf("downwardAPI: %w", err)
		}
	}
	return nil
}

// downwardValue resolves one item. A volume belongs to no container, so a
// resourceFieldRef names its own.
func downwardValue(pod *v1.Pod, it *v1.DownwardAPIVolumeFile, allocatable v1.ResourceList) (string, error) {
	var val string
	var err error
	switch {
	case it.FieldRef != nil && it.ResourceFieldRef != nil:
		return "", fmt.Errorf("%w: both fieldRef and resourceFieldRef", ErrInvalid)
	case it.FieldRef != nil:
		val, err = podspec.FieldValue(pod, it.FieldRef.FieldPath, podspec.InVolume, podspec.Addresses{})
	case it.ResourceFieldRef != nil:
		val, err = podspec.NamedResourceFieldValue(pod, it.ResourceFieldRef, allocatable)
	default:
		return "", fmt.Errorf("%w: neither fieldRef nor resourceFieldRef", ErrInvalid)
	}
	switch {
	case errors.Is(err, podspec.ErrUnsupported):
		return "", fmt.Errorf("%w: %v", ErrUnsupported, err)
	case err != nil:
		return "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return val, nil
}

// downwardItems lists the downward API items of a content volume.
func downwardItems(vol *v1.Volume) []v1.DownwardAPIVolumeFile {
	switch {
	case vol.DownwardAPI != nil:
		return vol.DownwardAPI.Items
	case vol.Projected != nil:
		var items []v1.DownwardAPIVolumeFile
		for _, src := range vol.Projected.Sources {
			if src.DownwardAPI != nil {
				items = append(items, src.DownwardAPI.Items...)
			}
		}
		return items
	}
	return nil
}

// downwardDigest sums what vol's downward API items read in pod, errors
// included; has is false for a volume without such items.
func downwardDigest(pod *v1.Pod, vol *v1.Volume, allocatable v1.ResourceList) (sum [sha256.Size]byte, has bool) {
	items := downwardItems(vol)
	if len(items) == 0 {
		return sum, false
	}
	h := sha256.New()
	for i := range items {
		val, err := downwardValue(pod, &items[i], allocatable)
		if err != nil {
			val = "error: " + err.Error()
		}
		fmt.Fprintf(h, "%d:%s%d:%s", len(items[i].Path), items[i].Path, len(val), val)
	}
	h.Sum(sum[:0])
	return sum, true
}

// downwardDigests is downwardDigest for every volume of pod that has
// downward API items, by volume name.
func downwardDigests(pod *v1.Pod, allocatable v1.ResourceList) map[string][sha256.Size]byte {
	var out map[string][sha256.Size]byte
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if sum, ok := downwardDigest(pod, vol, allocatable); ok {
			if out == nil {
				out = map[string][sha256.Size]byte{}
			}
			out[vol.Name] = sum
		}
	}
	return out
}

// downwardAPIVolume builds a downwardAPI volume's payload.
func (s *Source) downwardAPIVolume(pod *v1.Pod, src *v1.DownwardAPIVolumeSource) (payload, error) {
	pl := payload{}
	return pl, s.downwardPayload(pl, pod, src.Items, src.DefaultMode)
}
