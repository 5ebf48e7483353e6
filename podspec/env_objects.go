package podspec

import v1 "k8s.io/api/core/v1"

// EnvObjects are what a container's envFrom and valueFrom refer to, read
// before its config is built so that ContainerConfig stays a pure
// function. A name mapped to nil is an optional object that does not
// exist.
type EnvObjects struct {
	ConfigMaps map[string]map[string][]byte
	Secrets    map[string]map[string][]byte
	// Services are the services whose variables the container gets.
	Services []*v1.Service
}

func isTrue(b *bool) bool { return b != nil && *b }
