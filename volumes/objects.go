package volumes

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Objects are read from the API server when a pod starts, through a cache
// that lets one read serve every pod starting within objectTTL of it
// (objcache.go): a starting pod sees content at most that old.

// configMapData returns the ConfigMap's data and binaryData as one map;
// found is false for a missing optional ConfigMap.
func (s *Source) configMapData(ctx context.Context, ns, name string, optional bool) (data map[string][]byte, what string, found bool, err error) {
	what = fmt.Sprintf("configMap %q in namespace %q", name, ns)
	data, found, err = s.objects.get(ctx, objectKey{"configmap", ns, name}, func(ctx context.Context) (map[string][]byte, bool, error) {
		cm, err := s.client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		data := make(map[string][]byte, len(cm.Data)+len(cm.BinaryData))
		for k, v := range cm.Data {
			data[k] = []byte(v)
		}
		for k, v := range cm.BinaryData {
			data[k] = v
		}
		return data, true, nil
	})
	return answer(what, data, found, err, optional)
}

// answer turns a read into the result the payloads use: a missing object
// is an error unless optional.
func answer(what string, data map[string][]byte, found bool, err error, optional bool) (map[string][]byte, string, bool, error) {
	switch {
	case err != nil:
		return nil, what, false, fmt.Errorf("get %s: %w", what, err)
	case !found && optional:
		return nil, what, false, nil
	case !found:
		return nil, what, false, fmt.Errorf("%s: %w", what, ErrNotFound)
	}
	return data, what, true, nil
}

// secretData returns the Secret's data; found is false for a missing
// optional Secret.
func (s *Source) secretData(ctx context.Context, ns, name string, optional bool) (data map[string][]byte, what string, found bool, err error) {
	what = fmt.Sprintf("secret %q in namespace %q", name, ns)
	data, found, err = s.objects.get(ctx, objectKey{"secret", ns, name}, func(ctx context.Context) (map[string][]byte, bool, error) {
		sec, err := s.client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		return sec.Data, true, nil
	})
	return answer(what, data, found, err, optional)
}

func (s *Source) configMapPayload(ctx context.Context, pod *v1.Pod, src *v1.ConfigMapVolumeSource) (payload, error) {
	optional := isTrue(src.Optional)
	data, what, found, err := s.configMapData(ctx, pod.Namespace, src.Name, optional)
	if err != nil || !found {
		return payload{}, err
	}
	pl := payload{}
	return pl, project(pl, what, data, src.Items, src.DefaultMode, optional)
}

func (s *Source) secretPayload(ctx context.Context, pod *v1.Pod, src *v1.SecretVolumeSource) (payload, error) {
	optional := isTrue(src.Optional)
	data, what, found, err := s.secretData(ctx, pod.Namespace, src.SecretName, optional)
	if err != nil || !found {
		return payload{}, err
	}
	pl := payload{}
	return pl, project(pl, what, data, src.Items, src.DefaultMode, optional)
}

func isTrue(b *bool) bool { return b != nil && *b }
