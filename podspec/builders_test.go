package podspec

import "github.com/podline/podline/internal/podtest"

var (
	// unitPod is a pod "web" in "default" with one app container "app",
	// changed by mutate.
	unitPod = podtest.Pod
	// testResources builds requirements from quantities; "" leaves one
	// unset.
	testResources = podtest.Resources
	withApps      = podtest.Apps
)

func ptrOf[T any](v T) *T { return podtest.Ptr(v) }
