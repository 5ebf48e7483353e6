package podspec

import (
	"net"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// serviceEnv returns the variables of the services a pod sees, as the
// kubelet makes them: {NAME}_SERVICE_HOST/_PORT and the Docker link style
// {NAME}_PORT_*, services sorted by name. default/kubernetes is always
// there, so in-cluster clients find the API server; the pod's own
// namespace only with enableServiceLinks (default true).
func serviceEnv(pod *v1.Pod, services []*v1.Service) []*v1.EnvVar {
	links := pod.Spec.EnableServiceLinks == nil || *pod.Spec.EnableServiceLinks
	chosen := map[string]*v1.Service{}
	for _, s := range services {
		if s.Spec.ClusterIP == "" || s.Spec.ClusterIP == v1.ClusterIPNone {
			continue
		}
		switch {
		case s.Namespace == "default" && s.Name == "kubernetes":
			if _, ok := chosen[s.Name]; !ok {
				chosen[s.Name] = s
			}
		case s.Namespace == pod.Namespace && links:
			chosen[s.Name] = s
		}
	}
	names := make([]string, 0, len(chosen))
	for n := range chosen {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []*v1.EnvVar
	add := func(k, v string) { out = append(out, &v1.EnvVar{Name: k, Value: v}) }
	for _, n := range names {
		s := chosen[n]
		prefix := strings.ToUpper(strings.ReplaceAll(s.Name, "-", "_"))
		ip := s.Spec.ClusterIP
		if len(s.Spec.Ports) == 0 {
			continue
		}
		add(prefix+"_SERVICE_HOST", ip)
		add(prefix+"_SERVICE_PORT", strconv.Itoa(int(s.Spec.Ports[0].Port)))
		for _, p := range s.Spec.Ports {
			if p.Name != "" {
				add(prefix+"_SERVICE_PORT_"+strings.ToUpper(strings.ReplaceAll(p.Name, "-", "_")), strconv.Itoa(int(p.Port)))
			}
		}
		for i, p := range s.Spec.Ports {
			proto := string(p.Protocol)
			if proto == "" {
				proto = string(v1.ProtocolTCP)
			}
			port := strconv.Itoa(int(p.Port))
			url := strings.ToLower(proto) + "://" + net.JoinHostPort(ip, port)
			if i == 0 {
				add(prefix+"_PORT", url)
			}
			pp := prefix + "_PORT_" + port + "_" + strings.ToUpper(proto)
			add(pp, url)
			add(pp+"_PROTO", strings.ToLower(proto))
			add(pp+"_PORT", port)
			add(pp+"_ADDR", ip)
		}
	}
	return out
}
