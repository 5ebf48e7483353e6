package stages

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/podspec"
)

// EnvSource reads the configMaps and secrets a container's environment
// refers to. found is false for a missing object; whether that is an error
// is podspec's to say, when the environment reaches the reference.
type EnvSource interface {
	ConfigMap(ctx context.Context, namespace, name string) (data map[string][]byte, found bool, err error)
	Secret(ctx context.Context, namespace, name string) (data map[string][]byte, found bool, err error)
}

// ServiceSource lists the services whose variables a pod's containers
// see: those of the pod's namespace and the API server's own service,
// default/kubernetes. An error means the list is not known yet.
type ServiceSource interface {
	Services(namespace string) ([]*v1.Service, error)
}

// FetchEnvObjects reads each object spec refers to once, and the services
// the pod sees. It returns nil without a source (no API server):
// references then fail as unresolvable, unless optional.
func FetchEnvObjects(ctx context.Context, src EnvSource, services ServiceSource, pod *v1.Pod, spec *v1.Container) (*podspec.EnvObjects, error) {
	if src == nil {
		return nil, nil
	}
	objs := &podspec.EnvObjects{ConfigMaps: map[string]map[string][]byte{}, Secrets: map[string]map[string][]byte{}}
	if services != nil {
		list, err := services.Services(pod.Namespace)
		if err != nil {
			return nil, podspec.ConfigError(err)
		}
		objs.Services = list
	}
	get := func(secret bool, name string) error {
		into, read := objs.ConfigMaps, src.ConfigMap
		if secret {
			into, read = objs.Secrets, src.Secret
		}
		if _, done := into[name]; done {
			return nil
		}
		// A missing object is kept as nil, and podspec reports it when the
		// environment reaches it, in the order of envFrom then env. The
		// first error is then the kubelet's (a key missing from an earlier
		// object comes before a later missing object). An error here is
		// the API server's.
		data, found, err := read(ctx, pod.Namespace, name)
		switch {
		case err != nil:
			return podspec.ConfigError(err)
		case !found:
			data = nil
		case data == nil:
			data = map[string][]byte{} // exists, holds nothing
		}
		into[name] = data
		return nil
	}
	for _, ef := range spec.EnvFrom {
		if r := ef.ConfigMapRef; r != nil {
			if err := get(false, r.Name); err != nil {
				return nil, err
			}
		}
		if r := ef.SecretRef; r != nil {
			if err := get(true, r.Name); err != nil {
				return nil, err
			}
		}
	}
	for _, e := range spec.Env {
		if e.ValueFrom == nil {
			continue
		}
		if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
			if err := get(false, r.Name); err != nil {
				return nil, err
			}
		}
		if r := e.ValueFrom.SecretKeyRef; r != nil {
			if err := get(true, r.Name); err != nil {
				return nil, err
			}
		}
	}
	return objs, nil
}
