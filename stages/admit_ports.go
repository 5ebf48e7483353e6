package stages

import v1 "k8s.io/api/core/v1"

// bindAll is the address a host port binds when it names none.
const bindAll = "0.0.0.0"

// hostPort is one port a pod binds on the node, its address and protocol
// filled in as the scheduler reads them: no hostIP binds 0.0.0.0, no
// protocol is TCP.
type hostPort struct {
	ip       string
	protocol v1.Protocol
	port     int32
}

// protoPort is a host port on any address.
type protoPort struct {
	protocol v1.Protocol
	port     int32
}

// hostPorts lists the host ports of the pod's containers (a containerPort
// without a hostPort binds nothing on the node). Init containers that run
// to completion hold theirs only while they run, so, as the scheduler
// does, only restartable ones count. Nil when there are none.
func hostPorts(pod *v1.Pod) []hostPort {
	var out []hostPort
	add := func(c *v1.Container) {
		for _, p := range c.Ports {
			if p.HostPort <= 0 {
				continue
			}
			hp := hostPort{ip: p.HostIP, protocol: p.Protocol, port: p.HostPort}
			if hp.ip == "" {
				hp.ip = bindAll
			}
			if hp.protocol == "" {
				hp.protocol = v1.ProtocolTCP
			}
			out = append(out, hp)
		}
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			add(c)
		}
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i])
	}
	return out
}

// portSet is the host ports the admitted pods hold. It counts holders, so
// that releasing one pod never frees a port another still holds, and it
// keeps a count per protocol and port over all addresses, so that a
// wildcard check is one lookup, not a walk over every address.
type portSet struct {
	exact map[hostPort]int
	any   map[protoPort]int
}

// conflicts reports whether p collides with a held port: the same
// protocol and port on the same address, or with either side on 0.0.0.0.
func (s *portSet) conflicts(p hostPort) bool {
	if p.ip == bindAll {
		return s.any[protoPort{p.protocol, p.port}] > 0
	}
	wild := p
	wild.ip = bindAll
	return s.exact[p] > 0 || s.exact[wild] > 0
}

// conflictsAny reports whether any of ps collides with a held port.
func (s *portSet) conflictsAny(ps []hostPort) bool {
	for _, p := range ps {
		if s.conflicts(p) {
			return true
		}
	}
	return false
}

func (s *portSet) add(ps []hostPort) {
	if len(ps) > 0 && s.exact == nil {
		s.exact, s.any = make(map[hostPort]int), make(map[protoPort]int)
	}
	for _, p := range ps {
		s.exact[p]++
		s.any[protoPort{p.protocol, p.port}]++
	}
}

func (s *portSet) remove(ps []hostPort) {
	for _, p := range ps {
		if s.exact[p]--; s.exact[p] <= 0 {
			delete(s.exact, p)
		}
		pp := protoPort{p.protocol, p.port}
		if s.any[pp]--; s.any[pp] <= 0 {
			delete(s.any, pp)
		}
	}
}
