// Package kubeapi builds podline's one connection to the API server. It owns
// the kubeconfig and the client-side rate limit (--kube-api-qps,
// --kube-api-burst); it holds no state about pods or nodes.
package kubeapi

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Config is how podline reaches the API server.
type Config struct {
	Kubeconfig string
	QPS        float32
	Burst      int
	// UserAgent names podline and its version in the API server's logs.
	UserAgent string
}

// Clients are podline's three connections, split as the kubelet splits
// them so that one kind of traffic cannot starve another: Pods for pods,
// volumes and statuses (--kube-api-qps/--kube-api-burst), Events for
// events (--event-qps/--event-burst), and Heartbeat, unthrottled, for the
// node status and lease, which must never wait behind a burst of pod
// starts or the node would be marked NotReady.
type Clients struct {
	Pods, Events, Heartbeat kubernetes.Interface
}

// NewClients makes the three from one kubeconfig. eventQPS and eventBurst
// limit the events client.
func NewClients(c Config, eventQPS float32, eventBurst int) (*Clients, error) {
	registerMetrics()
	pods, _, err := New(c)
	if err != nil {
		return nil, err
	}
	ev := c
	ev.QPS, ev.Burst = eventQPS, eventBurst
	events, _, err := New(ev)
	if err != nil {
		return nil, err
	}
	hb := c
	hb.QPS, hb.Burst = -1, 0 // no client-side limit
	heartbeat, _, err := New(hb)
	if err != nil {
		return nil, err
	}
	return &Clients{Pods: pods, Events: events, Heartbeat: heartbeat}, nil
}

// New loads the kubeconfig and returns a clientset whose requests share one
// token bucket of QPS and Burst (none with a negative QPS).
func New(c Config) (kubernetes.Interface, *rest.Config, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig %s: %w", c.Kubeconfig, err)
	}
	rc.QPS, rc.Burst = c.QPS, c.Burst
	if c.UserAgent != "" {
		rc.UserAgent = c.UserAgent
	}
	// Protobuf halves the bytes and the decode cost of pod lists and
	// watches; every built-in type podline uses speaks it.
	rc.ContentType = "application/vnd.kubernetes.protobuf"
	rc.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig %s: %w", c.Kubeconfig, err)
	}
	return cs, rc, nil
}
