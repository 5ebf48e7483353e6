package podspec

import (
	"strings"

	v1 "k8s.io/api/core/v1"
)

// DefaultPullPolicy is the imagePullPolicy of a container that sets none:
// an image without a tag or digest means ":latest", which is expected to
// move, so it is pulled every time; anything pinned is pulled only when
// missing. The tag is after the last ':' of the last path component, so
// "registry:5000/app" has no tag.
func DefaultPullPolicy(image string) v1.PullPolicy {
	if strings.Contains(image, "@") {
		return v1.PullIfNotPresent
	}
	last := image[strings.LastIndex(image, "/")+1:]
	i := strings.LastIndex(last, ":")
	if i < 0 || last[i+1:] == "latest" {
		return v1.PullAlways
	}
	return v1.PullIfNotPresent
}
