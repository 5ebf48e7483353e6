package sources

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podline/podline/podspec"
)

type containerContext struct {
	volumes     map[string]struct{}
	names       map[string]struct{} // container names so far, init and regular
	init        bool
	hostNetwork bool
}

func validateContainer(c *v1.Container, p *field.Path, cc containerContext) field.ErrorList {
	errs := validateName(c.Name, p.Child("name"), validation.IsDNS1123Label)
	if _, dup := cc.names[c.Name]; dup && len(errs) == 0 {
		errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
	}
	cc.names[c.Name] = struct{}{}
	switch {
	case c.Image == "":
		errs = append(errs, field.Required(p.Child("image"), ""))
	case strings.TrimSpace(c.Image) != c.Image:
		errs = append(errs, field.Invalid(p.Child("image"), c.Image, "must not have leading or trailing whitespace"))
	}
	errs = append(errs, validateEnum(c.ImagePullPolicy, p.Child("imagePullPolicy"),
		v1.PullAlways, v1.PullIfNotPresent, v1.PullNever)...)
	errs = append(errs, validateEnum(c.TerminationMessagePolicy, p.Child("terminationMessagePolicy"),
		v1.TerminationMessageReadFile, v1.TerminationMessageFallbackToLogsOnError)...)
	if rp := c.RestartPolicy; rp != nil {
		if cc.init {
			errs = append(errs, validateEnum(*rp, p.Child("restartPolicy"), v1.ContainerRestartPolicyAlways)...)
		} else {
			errs = append(errs, field.Forbidden(p.Child("restartPolicy"), "may only be set for init containers"))
		}
	}
	if cc.init && c.RestartPolicy == nil {
		errs = append(errs, validateInitOnly(c, p)...)
	}
	errs = append(errs, validatePorts(c.Ports, p.Child("ports"), cc.hostNetwork)...)
	errs = append(errs, validateEnv(c.Env, p.Child("env"))...)
	errs = append(errs, validateMounts(c.VolumeMounts, p.Child("volumeMounts"), cc.volumes)...)
	return append(errs, validateResources(&c.Resources, p.Child("resources"))...)
}

func validatePorts(ports []v1.ContainerPort, p *field.Path, hostNetwork bool) field.ErrorList {
	var errs field.ErrorList
	for i := range ports {
		port, pp := &ports[i], p.Index(i)
		for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
			errs = append(errs, field.Invalid(pp.Child("containerPort"), port.ContainerPort, msg))
		}
		if port.HostPort != 0 {
			for _, msg := range validation.IsValidPortNum(int(port.HostPort)) {
				errs = append(errs, field.Invalid(pp.Child("hostPort"), port.HostPort, msg))
			}
		}
		if hostNetwork && port.HostPort != port.ContainerPort {
			errs = append(errs, field.Invalid(pp.Child("hostPort"), port.HostPort, "must match `containerPort` when `hostNetwork` is true"))
		}
		errs = append(errs, validateEnum(port.Protocol, pp.Child("protocol"), v1.ProtocolTCP, v1.ProtocolUDP, v1.ProtocolSCTP)...)
		if port.Name != "" {
			for _, msg := range validation.IsValidPortName(port.Name) {
				errs = append(errs, field.Invalid(pp.Child("name"), port.Name, msg))
			}
		}
	}
	return errs
}

func validateEnv(env []v1.EnvVar, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range env {
		e, ep := &env[i], p.Index(i)
		errs = append(errs, validateName(e.Name, ep.Child("name"), podspec.CheckEnvVarName)...)
		if e.ValueFrom != nil {
			errs = append(errs, validateEnvSource(e, ep.Child("valueFrom"))...)
		}
	}
	return errs
}

// validateEnvSource accepts exactly what the container's environment
// resolves: the sources, field paths, resources and divisors come from
// podspec, which resolves them too.
func validateEnvSource(e *v1.EnvVar, p *field.Path) field.ErrorList {
	vf := e.ValueFrom
	var errs field.ErrorList
	if e.Value != "" {
		errs = append(errs, field.Invalid(p, "", "may not be specified when `value` is not empty"))
	}
	src, err := podspec.EnvSourceOf(vf)
	switch {
	case errors.Is(err, podspec.ErrUnsupported):
		return append(errs, field.Forbidden(p.Child(string(src)), "not supported by podline"))
	case err != nil:
		return append(errs, field.Invalid(p, "", err.Error()))
	}
	sp := p.Child(string(src))
	switch src {
	case podspec.FieldRef:
		r := vf.FieldRef
		if r.APIVersion != "v1" {
			errs = append(errs, field.NotSupported(sp.Child("apiVersion"), r.APIVersion, []string{"v1"}))
		}
		errs = append(errs, validateFieldPath(r.FieldPath, sp.Child("fieldPath"), podspec.InEnv)...)
	case podspec.ResourceFieldRef:
		r := vf.ResourceFieldRef
		if err := podspec.CheckResourceField(r.Resource); err != nil {
			errs = append(errs, field.NotSupported(sp.Child("resource"), r.Resource, podspec.ResourceFields()))
		} else if err := podspec.CheckDivisor(r.Resource, r.Divisor); err != nil {
			errs = append(errs, field.Invalid(sp.Child("divisor"), r.Divisor.String(), err.Error()))
		}
	case podspec.ConfigMapKeyRef:
		if vf.ConfigMapKeyRef.Key == "" {
			errs = append(errs, field.Required(sp.Child("key"), ""))
		}
	case podspec.SecretKeyRef:
		if vf.SecretKeyRef.Key == "" {
			errs = append(errs, field.Required(sp.Child("key"), ""))
		}
	}
	return errs
}

func validateFieldPath(path string, p *field.Path, r podspec.Reader) field.ErrorList {
	err := podspec.CheckFieldPath(path, r)
	switch {
	case err == nil:
		return nil
	case path == "":
		return field.ErrorList{field.Required(p, "")}
	case errors.Is(err, podspec.ErrUnsupported):
		return field.ErrorList{field.NotSupported(p, path, podspec.FieldPaths(r))}
	}
	return field.ErrorList{field.Invalid(p, path, err.Error())}
}

func validateMounts(mounts []v1.VolumeMount, p *field.Path, volumes map[string]struct{}) field.ErrorList {
	var errs field.ErrorList
	paths := make(map[string]struct{}, len(mounts))
	for i := range mounts {
		m, mp := &mounts[i], p.Index(i)
		if m.Name == "" {
			errs = append(errs, field.Required(mp.Child("name"), ""))
		} else if _, ok := volumes[m.Name]; !ok {
			errs = append(errs, field.NotFound(mp.Child("name"), m.Name))
		}
		if m.MountPath == "" {
			errs = append(errs, field.Required(mp.Child("mountPath"), ""))
		} else if _, dup := paths[m.MountPath]; dup {
			errs = append(errs, field.Invalid(mp.Child("mountPath"), m.MountPath, "must be unique"))
		}
		paths[m.MountPath] = struct{}{}
		if m.SubPath != "" {
			if err := podspec.CheckSubPath(m.SubPath); err != nil {
				errs = append(errs, field.Invalid(mp.Child("subPath"), m.SubPath, err.Error()))
			}
			// Only one can say where the mount starts.
			if m.SubPathExpr != "" {
				errs = append(errs, field.Invalid(mp.Child("subPathExpr"), m.SubPathExpr, "subPathExpr and subPath are mutually exclusive"))
			}
		}
	}
	return errs
}

// validateResources checks that quantities are not negative and requests
// do not exceed limits, in sorted resource order so errors are stable.
func validateResources(r *v1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, list := range []struct {
		name string
		rl   v1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for _, name := range slices.Sorted(maps.Keys(list.rl)) {
			if q := list.rl[name]; q.Sign() < 0 {
				errs = append(errs, field.Invalid(p.Child(list.name).Key(string(name)), q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		req := r.Requests[name]
		if limit, ok := r.Limits[name]; ok && req.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), req.String(),
				fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		}
	}
	return errs
}

// validateInitOnly refuses what an ordinary init container cannot have,
// as the API server does: probes and hooks, which only a container that
// keeps running (an app container, a sidecar) has a use for.
func validateInitOnly(c *v1.Container, p *field.Path) field.ErrorList {
	const msg = "may not be set for init containers without restartPolicy=Always"
	var errs field.ErrorList
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"lifecycle", c.Lifecycle != nil},
		{"livenessProbe", c.LivenessProbe != nil},
		{"readinessProbe", c.ReadinessProbe != nil},
		{"startupProbe", c.StartupProbe != nil},
	} {
		if f.set {
			errs = append(errs, field.Forbidden(p.Child(f.name), msg))
		}
	}
	return errs
}
