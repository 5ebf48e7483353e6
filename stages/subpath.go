package stages

import (
	"errors"
	"fmt"
	"os"

	"github.com/podline/podline/internal/safepath"
	"github.com/podline/podline/podspec"
)

// prepareSubPath makes the subPath inside its volume when missing (with the
// volume's own mode, so an emptyDir's subdirectory stays writable for every
// user, as the kubelet makes it) and binds it onto Target. A subPath that
// resolves outside the volume is refused: the container gets
// CreateContainerConfigError and nothing is mounted.
func prepareSubPath(b podspec.SubPathBind) error {
	fi, err := os.Stat(b.Base)
	if err != nil {
		return fmt.Errorf("volume %q: %w", b.Mount, err)
	}
	if err := safepath.MkdirAll(b.Base, b.Rel, fi.Mode().Perm()); err != nil {
		return subPathError(b, err)
	}
	if err := safepath.BindBeneath(b.Base, b.Rel, b.Target); err != nil {
		return subPathError(b, err)
	}
	return nil
}

func subPathError(b podspec.SubPathBind, err error) error {
	if errors.Is(err, safepath.ErrEscapes) {
		// The resolved path is not named: it would tell the pod about the
		// host.
		return b.Errorf("%q resolves outside the volume", b.Rel)
	}
	return b.Errorf("%v", err)
}
