package volumes

import "context"

// ConfigMap and Secret read the objects a container's environment refers
// to (envFrom, valueFrom): found is false for a missing object, which
// podspec reports, or not, as the reference's optional says. *Source is a
// stages.EnvSource.
func (s *Source) ConfigMap(ctx context.Context, namespace, name string) (map[string][]byte, bool, error) {
	return s.envData(ctx, configMapRef(namespace, name))
}

func (s *Source) Secret(ctx context.Context, namespace, name string) (map[string][]byte, bool, error) {
	return s.envData(ctx, secretRef(namespace, name))
}
