package volumes

import "context"

// ConfigMap and Secret read the objects a container's environment refers
// to (envFrom, valueFrom), with the same errors as volumes: found is false
// for a missing optional object. *Source is a stages.EnvSource.
func (s *Source) ConfigMap(ctx context.Context, namespace, name string, optional bool) (map[string][]byte, bool, error) {
	return s.envData(ctx, configMapRef(namespace, name), optional)
}

func (s *Source) Secret(ctx context.Context, namespace, name string, optional bool) (map[string][]byte, bool, error) {
	return s.envData(ctx, secretRef(namespace, name), optional)
}
