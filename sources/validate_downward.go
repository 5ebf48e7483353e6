package sources

import (
	"errors"
	"path"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/podline/podline/podspec"
)

// fileModeMessage is the API server's word for a mode out of range.
const fileModeMessage = "must be a number between 0 and 0777 (octal), both inclusive"

// validateDownwardVolumes checks the downward API items of a downwardAPI
// volume and of a projected volume's downwardAPI sources as the API server
// does, through podspec, which resolves them: the field paths a volume may
// read, resources, divisors, and the container a resourceFieldRef must
// name in a volume.
func validateDownwardVolumes(src *v1.VolumeSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if d := src.DownwardAPI; d != nil {
		dp := p.Child("downwardAPI")
		errs = append(errs, validateFileMode(d.DefaultMode, dp.Child("defaultMode"))...)
		errs = append(errs, validateDownwardItems(d.Items, dp.Child("items"))...)
	}
	if pr := src.Projected; pr != nil {
		for i := range pr.Sources {
			if d := pr.Sources[i].DownwardAPI; d != nil {
				errs = append(errs, validateDownwardItems(d.Items, p.Child("projected", "sources").Index(i).Child("downwardAPI", "items"))...)
			}
		}
	}
	return errs
}

func validateDownwardItems(items []v1.DownwardAPIVolumeFile, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range items {
		it, ip := &items[i], p.Index(i)
		errs = append(errs, validateItemPath(it.Path, ip.Child("path"))...)
		switch {
		case it.FieldRef != nil && it.ResourceFieldRef != nil:
			errs = append(errs, field.Invalid(ip, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		case it.FieldRef != nil:
			r, fp := it.FieldRef, ip.Child("fieldRef")
			if r.APIVersion != "v1" {
				errs = append(errs, field.NotSupported(fp.Child("apiVersion"), r.APIVersion, []string{"v1"}))
			}
			errs = append(errs, validateFieldPath(r.FieldPath, fp.Child("fieldPath"), podspec.InVolume)...)
		case it.ResourceFieldRef != nil:
			errs = append(errs, validateVolumeResourceField(it.ResourceFieldRef, ip.Child("resourceFieldRef"))...)
		default:
			errs = append(errs, field.Required(ip, "one of fieldRef and resourceFieldRef is required"))
		}
		errs = append(errs, validateFileMode(it.Mode, ip.Child("mode"))...)
	}
	return errs
}

// validateVolumeResourceField: in a volume, which belongs to no
// container, the reference names its container.
func validateVolumeResourceField(r *v1.ResourceFieldSelector, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if r.ContainerName == "" {
		errs = append(errs, field.Required(p.Child("containerName"), ""))
	}
	switch err := podspec.CheckResourceField(r.Resource); {
	case r.Resource == "":
		errs = append(errs, field.Required(p.Child("resource"), ""))
	case errors.Is(err, podspec.ErrUnsupported):
		errs = append(errs, field.NotSupported(p.Child("resource"), r.Resource, podspec.ResourceFields()))
	default:
		if err := podspec.CheckDivisor(r.Resource, r.Divisor); err != nil {
			errs = append(errs, field.Invalid(p.Child("divisor"), r.Divisor.String(), err.Error()))
		}
	}
	return errs
}

// validateItemPath: a file path stays inside the volume and clear of the
// "..data" names the volume's writer keeps.
func validateItemPath(s string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case s == "":
		return field.ErrorList{field.Required(p, "")}
	case path.IsAbs(s):
		errs = append(errs, field.Invalid(p, s, "must be a relative path"))
	}
	for _, elem := range strings.Split(s, "/") {
		if elem == ".." {
			errs = append(errs, field.Invalid(p, s, "must not contain '..'"))
			break
		}
	}
	if strings.HasPrefix(s, "..") {
		errs = append(errs, field.Invalid(p, s, "must not start with '..'"))
	}
	return errs
}

func validateFileMode(mode *int32, p *field.Path) field.ErrorList {
	if mode != nil && (*mode < 0 || *mode > 0o777) {
		return field.ErrorList{field.Invalid(p, *mode, fileModeMessage)}
	}
	return nil
}
