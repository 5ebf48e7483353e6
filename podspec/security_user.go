package podspec

import (
	"fmt"
	"math"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The user a container runs as when neither the pod nor the container
// names one is the image's, which only the runtime can read (CRI
// ImageStatus: Uid when the image's USER is numeric, else Username; an
// image without USER runs as root). The container stage asks for it only
// when NeedsImageUser says the config depends on it.

// NeedsImageUser reports whether creating the container needs the image's
// user: it names no runAsUser, and either runAsNonRoot must be checked
// against the image or a runAsGroup needs a user to go with (the CRI
// refuses a group without a user).
func NeedsImageUser(pod *v1.Pod, spec *v1.Container) bool {
	psc, csc := pod.Spec.SecurityContext, spec.SecurityContext
	if psc == nil {
		psc = &v1.PodSecurityContext{}
	}
	if csc == nil {
		csc = &v1.SecurityContext{}
	}
	if firstSet(csc.RunAsUser, psc.RunAsUser) != nil {
		return false
	}
	return isTrue(firstSet(csc.RunAsNonRoot, psc.RunAsNonRoot)) || firstSet(csc.RunAsGroup, psc.RunAsGroup) != nil
}

// VerifyRunAsNonRoot refuses a container that must not run as root but
// would: its runAsUser is 0, or it names none and the image's user is
// root, not a valid uid, or a name, which cannot be checked before the
// container runs. img is the image's status (nil when the runtime does not
// know the image: then it is taken as root); it is not read when runAsUser
// is set.
// The messages are the kubelet's.
func VerifyRunAsNonRoot(pod *v1.Pod, spec *v1.Container, img *runtimeapi.Image) error {
	psc, csc := pod.Spec.SecurityContext, spec.SecurityContext
	if psc == nil {
		psc = &v1.PodSecurityContext{}
	}
	if csc == nil {
		csc = &v1.SecurityContext{}
	}
	if !isTrue(firstSet(csc.RunAsNonRoot, psc.RunAsNonRoot)) {
		return nil
	}
	ref := fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
	if uid := firstSet(csc.RunAsUser, psc.RunAsUser); uid != nil {
		if *uid == 0 {
			return fmt.Errorf("container's runAsUser breaks non-root policy (pod: %q, container: %s)", ref, spec.Name)
		}
		return nil
	}
	switch uid, name := imageUser(img); {
	case uid == nil:
		return fmt.Errorf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root (pod: %q, container: %s)",
			name, ref, spec.Name)
	case *uid == 0:
		return fmt.Errorf("container has runAsNonRoot and image will run as root (pod: %q, container: %s)", ref, spec.Name)
	default:
		if errs := validation.IsValidUserID(*uid); len(errs) > 0 {
			return fmt.Errorf("container has runAsNonRoot and image has an invalid user id (%d). (Must be 1-(%d)): %s (pod: %q, container: %s)",
				*uid, math.MaxInt32, strings.Join(errs, "; "), ref, spec.Name)
		}
	}
	return nil
}

// WithImageUser names the image's user in a security context that has a
// group but no user, which the runtime would refuse. Elsewhere the
// runtime reads the image's USER itself, group included, and sec is left
// alone.
func WithImageUser(sec *runtimeapi.LinuxContainerSecurityContext, img *runtimeapi.Image) {
	if sec == nil || sec.RunAsUser != nil || sec.RunAsUsername != "" || sec.RunAsGroup == nil {
		return
	}
	if uid, name := imageUser(img); uid != nil {
		sec.RunAsUser = &runtimeapi.Int64Value{Value: *uid}
	} else {
		sec.RunAsUsername = name
	}
}

// imageUser is the image's uid, or else its user name; an image that
// names neither (or is unknown) runs as root.
func imageUser(img *runtimeapi.Image) (*int64, string) {
	if uid := img.GetUid(); uid != nil {
		v := uid.GetValue()
		return &v, ""
	}
	if name := img.GetUsername(); name != "" {
		return nil, name
	}
	var root int64
	return &root, ""
}
