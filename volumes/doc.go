// Package volumes fills the pod volumes whose files come from the API
// server: configMap, secret, downwardAPI and projected (service account
// tokens, configMaps, secrets and downward API fields in one directory).
//
// It owns the files inside a volume's directory, written atomically behind
// a "..data" symlink so a container never reads half an update; their
// modes and owners and the directory's own, which follow defaultMode, item
// modes, fsGroup and runAsUser as on other nodes; and the tmpfs under
// secret and projected volumes, which keeps credentials off disk. It does
// not own where a volume lives or when it is set up (the volume stage in
// stages/ decides both), unmounting (the stage's teardown unmounts
// everything under the pod directory) or how a volume is mounted into a
// container.
package volumes

import "errors"

// Error classes, for errors.Is.
var (
	// ErrNotFound: a referenced object or key does not exist and the
	// volume does not mark it optional.
	ErrNotFound = errors.New("not found")
	// ErrUnsupported: a volume source podline cannot fill.
	ErrUnsupported = errors.New("not supported")
	// ErrInvalid: the volume asks for something impossible, such as a
	// path that leaves the volume or two files at one path.
	ErrInvalid = errors.New("invalid")
)
