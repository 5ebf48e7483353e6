package sources

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// fieldRefPaths are the downward-API fields podline resolves into
// environment variables.
var fieldRefPaths = []string{
	"metadata.name", "metadata.namespace", "metadata.uid",
	"spec.nodeName", "spec.serviceAccountName",
	"status.hostIP", "status.podIP", "status.podIPs",
}

var resourceFieldRefs = []string{
	"limits.cpu", "limits.memory", "limits.ephemeral-storage",
	"requests.cpu", "requests.memory", "requests.ephemeral-storage",
}

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
		errs = append(errs, validateName(e.Name, ep.Child("name"), validation.IsRelaxedEnvVarName)...)
		if e.ValueFrom != nil {
			errs = append(errs, validateEnvSource(e, ep.Child("valueFrom"))...)
		}
	}
	return errs
}

func validateEnvSource(e *v1.EnvVar, p *field.Path) field.ErrorList {
	vf := e.ValueFrom
	var errs field.ErrorList
	n := 0
	if r := vf.FieldRef; r != nil {
		n++
		fp := p.Child("fieldRef")
		if r.APIVersion != "v1" {
			errs = append(errs, field.NotSupported(fp.Child("apiVersion"), r.APIVersion, []string{"v1"}))
		}
		if r.FieldPath == "" {
			errs = append(errs, field.Required(fp.Child("fieldPath"), ""))
		} else if !slices.Contains(fieldRefPaths, r.FieldPath) {
			errs = append(errs, field.NotSupported(fp.Child("fieldPath"), r.FieldPath, fieldRefPaths))
		}
	}
	if r := vf.ResourceFieldRef; r != nil {
		n++
		if !slices.Contains(resourceFieldRefs, r.Resource) {
			errs = append(errs, field.NotSupported(p.Child("resourceFieldRef", "resource"), r.Resource, resourceFieldRefs))
		}
	}
	if r := vf.ConfigMapKeyRef; r != nil {
		n++
		if r.Key == "" {
			errs = append(errs, field.Required(p.Child("configMapKeyRef", "key"), ""))
		}
	}
	if r := vf.SecretKeyRef; r != nil {
		n++
		if r.Key == "" {
			errs = append(errs, field.Required(p.Child("secretKeyRef", "key"), ""))
		}
	}
	if vf.FileKeyRef != nil {
		n++
	}
	switch {
	case n == 0:
		errs = append(errs, field.Invalid(p, "", "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`"))
	case n > 1:
		errs = append(errs, field.Invalid(p, "", "may not have more than one field specified at a time"))
	}
	if e.Value != "" {
		errs = append(errs, field.Invalid(p, "", "may not be specified when `value` is not empty"))
	}
	return errs
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
			errs = append(errs, validateSubPath(m.SubPath, mp.Child("subPath"))...)
		}
	}
	return errs
}

// validateSubPath keeps a mount inside its volume.
func validateSubPath(sub string, p *field.Path) field.ErrorList {
	if filepath.IsAbs(sub) {
		return field.ErrorList{field.Invalid(p, sub, "must be a relative path")}
	}
	for _, part := range strings.Split(sub, "/") {
		if part == ".." {
			return field.ErrorList{field.Invalid(p, sub, "must not contain '..'")}
		}
	}
	return nil
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
