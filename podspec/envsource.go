package podspec

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// EnvSource is the member of an env var's valueFrom that is set, by its
// JSON name.
type EnvSource string

// The sources podline reads a value from.
const (
	FieldRef         EnvSource = "fieldRef"
	ResourceFieldRef EnvSource = "resourceFieldRef"
	ConfigMapKeyRef  EnvSource = "configMapKeyRef"
	SecretKeyRef     EnvSource = "secretKeyRef"
)

var envSources = []EnvSource{FieldRef, ResourceFieldRef, ConfigMapKeyRef, SecretKeyRef}

var (
	errNoEnvSource    = errors.New("must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`")
	errManyEnvSources = errors.New("may not have more than one field specified at a time")
)

// EnvSourceOf returns the one source vf sets. None or several is an error.
// A source podline does not read (fileKeyRef, or one a newer API adds)
// comes back named, with ErrUnsupported: the members are found by
// reflection, so a new one is refused rather than silently ignored.
func EnvSourceOf(vf *v1.EnvVarSource) (EnvSource, error) {
	var set []EnvSource
	v := reflect.ValueOf(vf).Elem()
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			set = append(set, EnvSource(name))
		}
	}
	switch {
	case len(set) == 0:
		return "", errNoEnvSource
	case len(set) > 1:
		return "", errManyEnvSources
	case !slices.Contains(envSources, set[0]):
		return set[0], fmt.Errorf("%w value source %s", ErrUnsupported, set[0])
	}
	return set[0], nil
}
