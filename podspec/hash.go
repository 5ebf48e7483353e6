package podspec

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// hashPrefix versions the hash stored on a container (the
// io.kubernetes.container.hash annotation), so that a later podline knows
// which fields a running container's hash covers and never compares
// unlike hashes. Changing what restartFields holds or how it is hashed
// needs a new prefix, and the comparison of the old one kept for the
// containers that carry it.
const hashPrefix = "v2:"

// restartFields is what decides whether a running container still matches
// its spec. Only fields that can change while a pod keeps its UID belong
// here: a static pod whose manifest changes is a new pod (its UID is made
// from the content), and the API server lets a running pod change only
// the image of its containers, and their cpu and memory through a resize.
// Any other field could differ only because its encoding did (a k8s.io/api
// upgrade that adds an optional field, a new default) and would restart
// every container on the node for nothing.
//
// The image is what the kubelet compares too. A resize the kubelet applies
// in place, or by a restart where the container's resizePolicy asks for
// one. podline cannot update a running container's resources yet, so it
// applies every resize by a restart: the one way the container gets the
// resources its spec now says, and that admission counts. (The pod cgroup
// keeps the limits it got when the sandbox started.) Quantities are hashed
// as podline applies them, so "1" and "1000m" are no change.
type restartFields struct {
	Image         string `json:"image"`
	CPURequestM   int64  `json:"cpuRequestMilli"`
	CPULimitM     int64  `json:"cpuLimitMilli"`
	MemoryRequest int64  `json:"memoryRequest"`
	MemoryLimit   int64  `json:"memoryLimit"`
}

// HashContainer fingerprints what decides whether a running container
// still matches c. It is stored on the container at creation; a desired
// spec with another hash means the container is restarted.
func HashContainer(c *v1.Container) string {
	b, err := json.Marshal(restartFields{
		Image:         c.Image,
		CPURequestM:   ContainerRequest(c, v1.ResourceCPU, true),
		CPULimitM:     ContainerLimit(c, v1.ResourceCPU, true),
		MemoryRequest: ContainerRequest(c, v1.ResourceMemory, false),
		MemoryLimit:   ContainerLimit(c, v1.ResourceMemory, false),
	})
	if err != nil {
		panic("BUG: restartFields do not encode: " + err.Error())
	}
	h := fnv.New64a()
	h.Write(b)
	return fmt.Sprintf("%s%016x", hashPrefix, h.Sum64())
}

// SpecChanged reports whether a running container, created with hash, no
// longer matches spec. An empty hash (a container podline did not create)
// is left alone, and so is a hash of a form this podline does not know: a
// container a newer podline made keeps running after a downgrade, rather
// than every container on the node restarting.
func SpecChanged(hash string, spec *v1.Container) bool {
	switch {
	case strings.HasPrefix(hash, hashPrefix):
		return hash != HashContainer(spec)
	case isLegacyHash(hash):
		return hash != LegacyHashContainer(spec)
	}
	return false
}
