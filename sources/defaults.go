package sources

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/podspec"
)

// Defaults the API server would apply to a v1 Pod. Static pods never pass
// through an API server, so podline fills them in itself; the rest of
// podline may then rely on them being set. Values k8s.io/api names are
// taken from it, and the pull policy from podspec, so the defaults and the
// code that reads the fields cannot disagree.
const (
	defaultNamespace     = "default"
	defaultSchedulerName = "default-scheduler"
)

// ApplyDefaults fills the unset fields of pod in place.
func ApplyDefaults(pod *v1.Pod) {
	if pod.Namespace == "" {
		pod.Namespace = defaultNamespace
	}
	s := &pod.Spec
	if s.RestartPolicy == "" {
		s.RestartPolicy = v1.RestartPolicyAlways
	}
	if s.DNSPolicy == "" {
		s.DNSPolicy = v1.DNSClusterFirst
	}
	if s.TerminationGracePeriodSeconds == nil {
		s.TerminationGracePeriodSeconds = ptrTo(int64(v1.DefaultTerminationGracePeriodSeconds))
	}
	if s.SchedulerName == "" {
		s.SchedulerName = defaultSchedulerName
	}
	if s.EnableServiceLinks == nil {
		s.EnableServiceLinks = ptrTo(true)
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &v1.PodSecurityContext{}
	}
	for i := range s.InitContainers {
		defaultContainer(&s.InitContainers[i], s.HostNetwork)
	}
	for i := range s.Containers {
		defaultContainer(&s.Containers[i], s.HostNetwork)
	}
	for i := range s.Volumes {
		defaultVolume(&s.Volumes[i].VolumeSource)
	}
}

func defaultContainer(c *v1.Container, hostNetwork bool) {
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = v1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = v1.TerminationMessageReadFile
	}
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = podspec.DefaultPullPolicy(c.Image)
	}
	for i := range c.Ports {
		p := &c.Ports[i]
		if p.Protocol == "" {
			p.Protocol = v1.ProtocolTCP
		}
		// With the host's network the container port is the host port.
		if hostNetwork && p.HostPort == 0 {
			p.HostPort = p.ContainerPort
		}
	}
	for i := range c.Env {
		if vf := c.Env[i].ValueFrom; vf != nil && vf.FieldRef != nil && vf.FieldRef.APIVersion == "" {
			vf.FieldRef.APIVersion = "v1"
		}
	}
	defaultRequestsToLimits(&c.Resources)
	for _, p := range []*v1.Probe{c.LivenessProbe, c.ReadinessProbe, c.StartupProbe} {
		defaultProbe(p)
	}
	if c.Lifecycle != nil {
		defaultHandler(c.Lifecycle.PostStart)
		defaultHandler(c.Lifecycle.PreStop)
	}
}

// defaultRequestsToLimits: a limit without a request requests the limit,
// which is what the QoS class and the scheduler assume.
func defaultRequestsToLimits(r *v1.ResourceRequirements) {
	for name, limit := range r.Limits {
		if _, ok := r.Requests[name]; ok {
			continue
		}
		if r.Requests == nil {
			r.Requests = make(v1.ResourceList, len(r.Limits))
		}
		r.Requests[name] = limit.DeepCopy()
	}
}

func defaultProbe(p *v1.Probe) {
	if p == nil {
		return
	}
	if p.TimeoutSeconds == 0 {
		p.TimeoutSeconds = 1
	}
	if p.PeriodSeconds == 0 {
		p.PeriodSeconds = 10
	}
	if p.SuccessThreshold == 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold == 0 {
		p.FailureThreshold = 3
	}
	if g := p.HTTPGet; g != nil {
		defaultHTTPGet(g)
	}
	if g := p.GRPC; g != nil && g.Service == nil {
		g.Service = ptrTo("")
	}
}

func defaultHandler(h *v1.LifecycleHandler) {
	if h != nil && h.HTTPGet != nil {
		defaultHTTPGet(h.HTTPGet)
	}
}

func defaultHTTPGet(g *v1.HTTPGetAction) {
	if g.Path == "" {
		g.Path = "/"
	}
	if g.Scheme == "" {
		g.Scheme = v1.URISchemeHTTP
	}
}

func defaultVolume(src *v1.VolumeSource) {
	if countVolumeSources(src) == 0 {
		// A volume that names no source is scratch space.
		src.EmptyDir = &v1.EmptyDirVolumeSource{}
	}
	mode := func(m **int32, def int32) {
		if *m == nil {
			*m = ptrTo(def)
		}
	}
	switch {
	case src.HostPath != nil && src.HostPath.Type == nil:
		src.HostPath.Type = ptrTo(v1.HostPathUnset)
	case src.Secret != nil:
		mode(&src.Secret.DefaultMode, v1.SecretVolumeSourceDefaultMode)
	case src.ConfigMap != nil:
		mode(&src.ConfigMap.DefaultMode, v1.ConfigMapVolumeSourceDefaultMode)
	case src.DownwardAPI != nil:
		mode(&src.DownwardAPI.DefaultMode, v1.DownwardAPIVolumeSourceDefaultMode)
		defaultDownwardItems(src.DownwardAPI.Items)
	case src.Projected != nil:
		mode(&src.Projected.DefaultMode, v1.ProjectedVolumeSourceDefaultMode)
		for _, s := range src.Projected.Sources {
			if s.DownwardAPI != nil {
				defaultDownwardItems(s.DownwardAPI.Items)
			}
		}
	}
}

// defaultDownwardItems: a fieldRef's apiVersion defaults to v1, in volumes
// as in environment variables.
func defaultDownwardItems(items []v1.DownwardAPIVolumeFile) {
	for i := range items {
		if r := items[i].FieldRef; r != nil && r.APIVersion == "" {
			r.APIVersion = "v1"
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
