package podspec

import (
	"encoding/json"
	"hash/fnv"
	"strconv"

	v1 "k8s.io/api/core/v1"
)

// Containers created before the hash was versioned carry a hash of their
// whole v1.Container in JSON: bare hex, no prefix. An upgraded podline
// compares them as it did then, so it restarts none that still match, and
// drops the comparison once no node runs such containers. The encoding
// follows k8s.io/api: TestLegacyHashGolden fails if an upgrade of it moves
// these hashes, which would restart every such container.

// LegacyHashContainer is the hash those containers carry.
func LegacyHashContainer(c *v1.Container) string {
	b, err := json.Marshal(c)
	if err != nil {
		panic("BUG: a v1.Container does not encode: " + err.Error())
	}
	h := fnv.New64a()
	h.Write(b)
	return strconv.FormatUint(h.Sum64(), 16)
}

// isLegacyHash reports whether hash has the unversioned form: 1 to 16
// lowercase hex digits.
func isLegacyHash(hash string) bool {
	if hash == "" || len(hash) > 16 {
		return false
	}
	for i := 0; i < len(hash); i++ {
		if c := hash[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
