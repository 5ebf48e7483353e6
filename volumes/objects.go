package volumes

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/kubeapi"
)

// A volume reads its configMaps and secrets from the watches of
// kubeapi.Objects: the pod is registered as a user of each object it
// shows (refresh.go), so the object is watched from its first setup until
// the pod's teardown and a change reaches the pod. An environment
// variable is read once, when its container starts, as on other nodes: it
// reads a watched object from memory, and otherwise through a cache that
// lets one GET serve every container starting within objectTTL of it
// (objcache.go).

// watchedData reads ref for pod uid, registering uid as a user of ref.
// found is false for a missing optional object.
func (s *Source) watchedData(ctx context.Context, uid types.UID, ref kubeapi.ObjectRef, optional bool) (map[string][]byte, bool, error) {
	if s.objects == nil {
		return nil, false, fmt.Errorf("%s: %w", ref, ErrNoAPIServer)
	}
	s.use(uid, ref)
	data, found, err := s.objects.Get(ctx, ref)
	return answer(ref, data, found, err, optional)
}

// answer turns a read into the result the payloads use: a missing object
// is an error unless optional.
func answer(ref kubeapi.ObjectRef, data map[string][]byte, found bool, err error, optional bool) (map[string][]byte, bool, error) {
	switch {
	case err != nil:
		return nil, false, fmt.Errorf("get %s: %w", ref, err)
	case !found && optional:
		return nil, false, nil
	case !found:
		return nil, false, objectNotFound(ref)
	}
	return data, true, nil
}

// envData reads ref for a container's environment; a missing object is
// not an error here (found is false).
func (s *Source) envData(ctx context.Context, ref kubeapi.ObjectRef) (map[string][]byte, bool, error) {
	if s.objects == nil {
		return nil, false, fmt.Errorf("%s: %w", ref, ErrNoAPIServer)
	}
	if data, found, ok := s.objects.Peek(ref); ok {
		return answer(ref, data, found, nil, true)
	}
	data, found, err := s.reads.get(ctx, ref, func(ctx context.Context) (map[string][]byte, bool, error) {
		return s.read(ctx, ref)
	})
	return answer(ref, data, found, err, true)
}

// read GETs one object.
func (s *Source) read(ctx context.Context, ref kubeapi.ObjectRef) (map[string][]byte, bool, error) {
	if ref.Kind == kubeapi.SecretObject {
		sec, err := s.client.CoreV1().Secrets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		return sec.Data, true, nil
	}
	cm, err := s.client.CoreV1().ConfigMaps(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
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
}

func configMapRef(ns, name string) kubeapi.ObjectRef {
	return kubeapi.ObjectRef{Kind: kubeapi.ConfigMapObject, Namespace: ns, Name: name}
}

func secretRef(ns, name string) kubeapi.ObjectRef {
	return kubeapi.ObjectRef{Kind: kubeapi.SecretObject, Namespace: ns, Name: name}
}

func (s *Source) configMapPayload(ctx context.Context, pod *v1.Pod, src *v1.ConfigMapVolumeSource) (payload, error) {
	pl := payload{}
	return pl, s.projectObject(ctx, pl, pod, configMapRef(pod.Namespace, src.Name), src.Items, src.DefaultMode, isTrue(src.Optional))
}

func (s *Source) secretPayload(ctx context.Context, pod *v1.Pod, src *v1.SecretVolumeSource) (payload, error) {
	pl := payload{}
	return pl, s.projectObject(ctx, pl, pod, secretRef(pod.Namespace, src.SecretName), src.Items, src.DefaultMode, isTrue(src.Optional))
}

// projectObject adds ref's keys to pl; a missing optional object adds
// nothing.
func (s *Source) projectObject(ctx context.Context, pl payload, pod *v1.Pod, ref kubeapi.ObjectRef, items []v1.KeyToPath, defaultMode *int32, optional bool) error {
	data, found, err := s.watchedData(ctx, pod.UID, ref, optional)
	if err != nil || !found {
		return err
	}
	return project(pl, ref, data, items, defaultMode, optional)
}

func isTrue(b *bool) bool { return b != nil && *b }
