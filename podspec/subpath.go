package podspec

import (
	"errors"
	"path/filepath"
	"strings"
)

// CheckSubPath refuses, as text, a subPath that can never stay inside its
// volume: an absolute path or one with a ".." component. The error leaves
// the path out, for the caller to name it with its field. Symlinks inside
// the volume are the mounting code's business; no text check sees them.
func CheckSubPath(sub string) error {
	if filepath.IsAbs(sub) {
		return errors.New("must be a relative path")
	}
	for _, part := range strings.Split(sub, "/") {
		if part == ".." {
			return errors.New("must not contain '..'")
		}
	}
	return nil
}
