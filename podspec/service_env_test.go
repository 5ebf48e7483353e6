package podspec

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestServiceEnv(t *testing.T) {
	svc := func(ns, name, ip string, ports ...v1.ServicePort) *v1.Service {
		return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.ServiceSpec{ClusterIP: ip, Ports: ports}}
	}
	services := []*v1.Service{
		svc("default", "kubernetes", "10.96.0.1", v1.ServicePort{Name: "https", Port: 443, Protocol: v1.ProtocolTCP}),
		svc("web", "my-db", "10.96.0.7", v1.ServicePort{Port: 5432}, v1.ServicePort{Name: "metrics", Port: 9187, Protocol: v1.ProtocolUDP}),
		svc("web", "headless", v1.ClusterIPNone, v1.ServicePort{Port: 80}),
		svc("other", "elsewhere", "10.96.0.9", v1.ServicePort{Port: 80}),
	}
	f := func(name string, links *bool, want string) {
		t.Helper()
		pod := unitPod(func(p *v1.Pod) { p.Namespace = "web"; p.Spec.EnableServiceLinks = links })
		var got []string
		for _, e := range serviceEnv(pod, services) {
			got = append(got, e.Name+"="+e.Value)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s:\n got %s\nwant %s", name, strings.Join(got, " "), want)
		}
	}
	kubernetes := "KUBERNETES_SERVICE_HOST=10.96.0.1 KUBERNETES_SERVICE_PORT=443 KUBERNETES_SERVICE_PORT_HTTPS=443 " +
		"KUBERNETES_PORT=tcp://10.96.0.1:443 KUBERNETES_PORT_443_TCP=tcp://10.96.0.1:443 KUBERNETES_PORT_443_TCP_PROTO=tcp " +
		"KUBERNETES_PORT_443_TCP_PORT=443 KUBERNETES_PORT_443_TCP_ADDR=10.96.0.1"
	f("links on: the namespace's services with a cluster IP, and the API server's", nil, kubernetes+
		" MY_DB_SERVICE_HOST=10.96.0.7 MY_DB_SERVICE_PORT=5432 MY_DB_SERVICE_PORT_METRICS=9187 MY_DB_PORT=tcp://10.96.0.7:5432"+
		" MY_DB_PORT_5432_TCP=tcp://10.96.0.7:5432 MY_DB_PORT_5432_TCP_PROTO=tcp MY_DB_PORT_5432_TCP_PORT=5432 MY_DB_PORT_5432_TCP_ADDR=10.96.0.7"+
		" MY_DB_PORT_9187_UDP=udp://10.96.0.7:9187 MY_DB_PORT_9187_UDP_PROTO=udp MY_DB_PORT_9187_UDP_PORT=9187 MY_DB_PORT_9187_UDP_ADDR=10.96.0.7")
	no := false
	f("links off: only the API server's", &no, kubernetes)
}
