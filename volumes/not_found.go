package volumes

import (
	"fmt"
	"strings"

	"github.com/podline/podline/kubeapi"
)

// notFound is ErrNotFound in the kubelet's words for the case: its
// FailedMount and CreateContainerConfigError messages are what operators
// and their alerts match, so a missing object or key reads the same here.
type notFound string

func (e notFound) Error() string        { return string(e) }
func (e notFound) Is(target error) bool { return target == ErrNotFound }

// objectNotFound: `configmap "app" not found`, as the API's NotFound for
// the kubelet's object managers reads.
func objectNotFound(ref kubeapi.ObjectRef) error {
	return notFound(fmt.Sprintf("%s %q not found", strings.ToLower(ref.Kind.String()), ref.Name))
}

// keyNotFound: the kubelet's configMap and secret volume plugins' words
// for an item whose key the object lacks.
func keyNotFound(kind kubeapi.ObjectKind, key string) error {
	if kind == kubeapi.SecretObject {
		return notFound("references non-existent secret key: " + key)
	}
	return notFound("configmap references non-existent config key: " + key)
}
