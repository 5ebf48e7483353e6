// Package volumes fills the pod volumes whose files podline writes:
// configMap, secret, downwardAPI and projected (service account tokens,
// configMaps, secrets and downward API fields in one directory), and
// keeps them current while the pod runs.
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
//
// Downward API fields and resources resolve through podspec, as container
// environments do, so they need no API server: on a node without one only
// configMaps, secrets and tokens fail.
//
// # Keeping volumes current
//
// Three things make a pod's content volumes stale: an object they show
// changed, a token in them falls due, or a label, annotation or resource
// they show changed in the pod. Each is noticed where it happens, never by
// polling pods. Objects are watched one by one (kubeapi.Objects) from a
// pod's first setup until its teardown, and a change marks the pods that
// show the object. Each pod has one token timer, in one timer queue for
// all pods, set for its earliest token's refresh: at 80% of the token's
// lifetime or after a day, whichever is first, as other nodes do. A pod
// whose labels change reaches the pipeline as an update anyway; Stale
// compares what its downward API items read now with what they were
// written with.
//
// A stale pod is not rewritten here. The source asks for a sync pass of
// the pod (OnStale), and the pass's volume stage asks Stale and sets the
// volumes up again. The pipeline runs one pass of a pod at a time, and a
// teardown is a pass: so a rewrite can never race the teardown that
// unmounts the same directories, never mounts a fresh tmpfs on a
// directory being removed, and never writes for a pod that is gone (its
// record went with Release). Writing from the watch's goroutine would need
// a second lock per pod shared with the stages, for no gain: a pass of a
// running pod costs a plan from cached state.
//
// What this costs the API server does not grow with pods: one list (or a
// watch with initial events) and one open watch per object however many
// pods show it, nothing per period, and a token request per token at 80%
// of its lifetime.
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
	// ErrNoAPIServer: the volume shows a configMap, secret or token on
	// a node that runs without an API server.
	ErrNoAPIServer = errors.New("needs the API server (--kubeconfig)")
)
