package stages

import (
	"encoding/json"
	"hash/fnv"
	"strconv"

	v1 "k8s.io/api/core/v1"
)

// HashContainer fingerprints a container spec. It is stored on the
// container at creation; a desired spec with another hash means the
// running container is out of date and is restarted. JSON encoding of a
// struct is deterministic (fields in order, map keys sorted), so the hash
// is stable across processes and restarts.
func HashContainer(c *v1.Container) string {
	b, err := json.Marshal(c)
	if err != nil {
		panic("BUG: a v1.Container does not encode: " + err.Error())
	}
	h := fnv.New64a()
	h.Write(b)
	return strconv.FormatUint(h.Sum64(), 16)
}
