package kubeapi

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// ErrServicesNotSynced: the services have not been listed yet, so
// containers cannot get their service variables; their start is retried.
var ErrServicesNotSynced = errors.New("services have not yet been read at least once, cannot construct envvars")

// Services keeps every Service in an informer cache, for the variables
// containers get (stages.ServiceSource). One watch for the node, however
// many pods.
type Services struct {
	informer cache.SharedIndexInformer
	lister   corelisters.ServiceLister
}

// NewServices prepares the informer; Run starts it.
func NewServices(client kubernetes.Interface) *Services {
	f := informers.NewSharedInformerFactory(client, 0)
	i := f.Core().V1().Services()
	return &Services{informer: i.Informer(), lister: i.Lister()}
}

// Run keeps the cache current until ctx ends.
func (s *Services) Run(ctx context.Context) { s.informer.RunWithContext(ctx) }

// Services returns the services of namespace and default/kubernetes.
func (s *Services) Services(namespace string) ([]*v1.Service, error) {
	if !s.informer.HasSynced() {
		return nil, ErrServicesNotSynced
	}
	list, err := s.lister.Services(namespace).List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("list services of %s: %w", namespace, err)
	}
	if namespace != v1.NamespaceDefault {
		k, err := s.lister.Services(v1.NamespaceDefault).Get("kubernetes")
		switch {
		case err == nil:
			list = append(list, k)
		case !apierrors.IsNotFound(err):
			return nil, err
		}
	}
	return list, nil
}
