package sources

import (
	"path/filepath"
	"reflect"

	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podline/podline/internal/poduid"
)

// Validate checks the parts of a pod podline acts on. It expects a defaulted
// pod (ApplyDefaults), as the API server validates after defaulting, so
// fields with defaults are required here. Errors name the field:
// "spec.containers[0].image: Required value".
func Validate(pod *v1.Pod) field.ErrorList {
	errs := validateMeta(&pod.ObjectMeta, field.NewPath("metadata"))
	return append(errs, validateSpec(&pod.Spec, field.NewPath("spec"))...)
}

func validateMeta(m *metav1.ObjectMeta, p *field.Path) field.ErrorList {
	errs := validateIdentity(m, p)
	errs = append(errs, metavalidation.ValidateLabels(m.Labels, p.Child("labels"))...)
	return append(errs, apivalidation.ValidateAnnotations(m.Annotations, p.Child("annotations"))...)
}

// validateIdentity checks the metadata that names the pod's directories
// and cgroup: each must be one safe path element. A missing UID is left to
// the Merger, which refuses it ("pod has no UID"); MakeStatic always sets
// one.
func validateIdentity(m *metav1.ObjectMeta, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateName(m.Name, p.Child("name"), validation.IsDNS1123Subdomain)...)
	errs = append(errs, validateName(m.Namespace, p.Child("namespace"), validation.IsDNS1123Label)...)
	if m.UID != "" {
		errs = append(errs, validateName(string(m.UID), p.Child("uid"), poduid.Check)...)
	}
	return errs
}

// validatePathNames checks every part of a pod that becomes a file or
// cgroup path element: the identity, and the container and volume names
// (log and volume directories). The Merger asks it of every pod from
// every source, so no path depends on a source having validated: the API
// server's pods are not validated again here, and static pods are, in
// full, before they reach the Merger.
func validatePathNames(pod *v1.Pod) field.ErrorList {
	errs := validateIdentity(&pod.ObjectMeta, field.NewPath("metadata"))
	spec := field.NewPath("spec")
	for _, list := range []struct {
		p          *field.Path
		containers []v1.Container
	}{{spec.Child("initContainers"), pod.Spec.InitContainers}, {spec.Child("containers"), pod.Spec.Containers}} {
		for i := range list.containers {
			errs = append(errs, validateName(list.containers[i].Name, list.p.Index(i).Child("name"), validation.IsDNS1123Label)...)
		}
	}
	for i := range pod.Spec.Volumes {
		errs = append(errs, validateName(pod.Spec.Volumes[i].Name, spec.Child("volumes").Index(i).Child("name"), validation.IsDNS1123Label)...)
	}
	return errs
}

func validateName(name string, p *field.Path, check func(string) []string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range check(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

func validateSpec(s *v1.PodSpec, p *field.Path) field.ErrorList {
	volumes, errs := validateVolumes(s.Volumes, p.Child("volumes"))
	if len(s.Containers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), ""))
	}
	names := make(map[string]struct{}, len(s.InitContainers)+len(s.Containers))
	for i := range s.InitContainers {
		errs = append(errs, validateContainer(&s.InitContainers[i], p.Child("initContainers").Index(i), containerContext{volumes, names, true, s.HostNetwork})...)
	}
	for i := range s.Containers {
		errs = append(errs, validateContainer(&s.Containers[i], p.Child("containers").Index(i), containerContext{volumes, names, false, s.HostNetwork})...)
	}
	errs = append(errs, validateEnum(s.RestartPolicy, p.Child("restartPolicy"),
		v1.RestartPolicyAlways, v1.RestartPolicyOnFailure, v1.RestartPolicyNever)...)
	errs = append(errs, validateEnum(s.DNSPolicy, p.Child("dnsPolicy"),
		v1.DNSClusterFirst, v1.DNSClusterFirstWithHostNet, v1.DNSDefault, v1.DNSNone)...)
	if s.DNSPolicy == v1.DNSNone && s.DNSConfig == nil {
		errs = append(errs, field.Required(p.Child("dnsConfig"), "must provide `dnsConfig` when `dnsPolicy` is None"))
	}
	if t := s.TerminationGracePeriodSeconds; t != nil && *t < 0 {
		errs = append(errs, field.Invalid(p.Child("terminationGracePeriodSeconds"), *t, "must be greater than or equal to 0"))
	}
	if t := s.ActiveDeadlineSeconds; t != nil && *t < 1 {
		errs = append(errs, field.Invalid(p.Child("activeDeadlineSeconds"), *t, "must be greater than or equal to 1"))
	}
	if s.Resources != nil {
		errs = append(errs, validateResources(s.Resources, p.Child("resources"))...)
	}
	return errs
}

// validateEnum requires value to be one of valid.
func validateEnum[T ~string](value T, p *field.Path, valid ...T) field.ErrorList {
	if value == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	for _, v := range valid {
		if value == v {
			return nil
		}
	}
	return field.ErrorList{field.NotSupported(p, value, valid)}
}

// validateVolumes returns the set of valid volume names for the mounts to
// refer to.
func validateVolumes(vols []v1.Volume, p *field.Path) (map[string]struct{}, field.ErrorList) {
	names := make(map[string]struct{}, len(vols))
	var errs field.ErrorList
	for i := range vols {
		v, vp := &vols[i], p.Index(i)
		nameErrs := validateName(v.Name, vp.Child("name"), validation.IsDNS1123Label)
		if _, dup := names[v.Name]; dup && len(nameErrs) == 0 {
			nameErrs = append(nameErrs, field.Duplicate(vp.Child("name"), v.Name))
		}
		if len(nameErrs) == 0 {
			names[v.Name] = struct{}{}
		}
		errs = append(errs, nameErrs...)
		errs = append(errs, validateVolumeSource(&v.VolumeSource, vp)...)
	}
	return names, errs
}

func validateVolumeSource(src *v1.VolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch n := countVolumeSources(src); {
	case n == 0:
		return field.ErrorList{field.Required(p, "must specify a volume type")}
	case n > 1:
		errs = append(errs, field.Forbidden(p, "may not specify more than 1 volume type"))
	}
	if hp := src.HostPath; hp != nil {
		hpp := p.Child("hostPath")
		switch {
		case hp.Path == "":
			errs = append(errs, field.Required(hpp.Child("path"), ""))
		case !filepath.IsAbs(hp.Path):
			errs = append(errs, field.Invalid(hpp.Child("path"), hp.Path, "must be an absolute path"))
		}
		if hp.Type != nil && *hp.Type != v1.HostPathUnset {
			errs = append(errs, validateEnum(*hp.Type, hpp.Child("type"),
				v1.HostPathDirectoryOrCreate, v1.HostPathDirectory, v1.HostPathFileOrCreate, v1.HostPathFile,
				v1.HostPathSocket, v1.HostPathCharDev, v1.HostPathBlockDev)...)
		}
	}
	if ed := src.EmptyDir; ed != nil {
		if ed.Medium != v1.StorageMediumDefault && ed.Medium != v1.StorageMediumMemory {
			errs = append(errs, field.NotSupported(p.Child("emptyDir", "medium"), ed.Medium,
				[]v1.StorageMedium{v1.StorageMediumDefault, v1.StorageMediumMemory}))
		}
		if ed.SizeLimit != nil && ed.SizeLimit.Sign() < 0 {
			errs = append(errs, field.Invalid(p.Child("emptyDir", "sizeLimit"), ed.SizeLimit.String(), "must be greater than or equal to 0"))
		}
	}
	return append(errs, validateDownwardVolumes(src, p)...)
}

// countVolumeSources counts the set members of a VolumeSource. Every member
// is a pointer, so reflection keeps this right as the API grows new sources.
func countVolumeSources(src *v1.VolumeSource) int {
	v := reflect.ValueOf(src).Elem()
	n := 0
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			n++
		}
	}
	return n
}
