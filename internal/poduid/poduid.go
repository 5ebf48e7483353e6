// Package poduid decides which pod UIDs podline accepts. A UID becomes a
// directory name (<root-dir>/pods/<uid>), the end of a log directory name
// (<ns>_<name>_<uid>) and a cgroup name (pod<uid>), so it must be one
// harmless path element whichever source it came from: a static manifest
// keeps a uid its author wrote, and the runtime's labels hold whatever was
// written there.
//
// The rule: 1 to 128 characters, each a letter, a digit, '-', '_' or '.',
// the first not '.'. Every UID Kubernetes makes passes: the API server's
// are UUIDs (36 characters) and static pods' are 32 hex digits, here and
// in the kubelet. It rules out '/', "." and "..", hidden names, NUL and
// whitespace, and keeps "pod<uid>" within a file name's 255 bytes.
package poduid

import "k8s.io/apimachinery/pkg/util/validation"

// MaxLength is the longest UID accepted.
const MaxLength = 128

// Message says why a UID of the right length is refused.
const Message = "a pod UID must consist of alphanumeric characters, '-', '_' or '.', and must not start with '.' (it names the pod's directory, log directory and cgroup)"

// Check returns why uid is refused, in the form of apimachinery's
// validation functions, or nil. An empty uid is refused too; callers that
// report a missing value as Required check for it first.
func Check(uid string) []string {
	var msgs []string
	if len(uid) > MaxLength {
		msgs = append(msgs, validation.MaxLenError(MaxLength))
	}
	if uid == "" || !charsOK(uid) {
		msgs = append(msgs, Message)
	}
	return msgs
}

// Valid reports whether uid is accepted. It does not allocate, so the
// stages can ask it on every path they build.
func Valid[T ~string](uid T) bool {
	return len(uid) > 0 && len(uid) <= MaxLength && charsOK(string(uid))
}

func charsOK(uid string) bool {
	if uid[0] == '.' {
		return false
	}
	for i := 0; i < len(uid); i++ {
		switch c := uid[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}
