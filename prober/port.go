package prober

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// resolvePort turns a probe's port, a number or the name of one of the
// container's ports, into a number. Resolved once per probe: a container's
// ports cannot change.
func resolvePort(p intstr.IntOrString, c *v1.Container) (int, error) {
	var n int
	switch p.Type {
	case intstr.Int:
		n = int(p.IntVal)
	case intstr.String:
		found := false
		for _, cp := range c.Ports {
			if cp.Name == p.StrVal {
				n, found = int(cp.ContainerPort), true
				break
			}
		}
		if !found {
			return 0, classed(errPort, fmt.Errorf("port %q not found", p.StrVal))
		}
	}
	if n <= 0 || n > 65535 {
		return 0, classed(errPort, fmt.Errorf("invalid port number: %d", n))
	}
	return n, nil
}
