package podspec

import (
	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/credentials"
)

// DefaultPullPolicy is the imagePullPolicy of a container that sets none,
// as the API server defaults it: the tag "latest", written or implied by a
// name with neither tag nor digest, is expected to move, so it is pulled
// every time; anything else is pulled only when missing. The API server
// looks at the tag alone, so "app:latest@sha256:..." is Always too. A name
// that does not parse defaults to IfNotPresent, as there; it fails as
// InvalidImageName before any pull.
func DefaultPullPolicy(image string) v1.PullPolicy {
	ref, err := credentials.ParseReference(image)
	if err == nil && ref.Tag == "latest" {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}
