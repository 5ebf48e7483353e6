// Package mirror keeps a mirror pod in the API server for every static pod
// podline runs (pods from the file and http sources), so that the cluster
// sees them: kubectl lists them, the scheduler counts what they use, and
// their status has an object to go to.
//
// It owns creating and deleting mirror pods and nothing else. It never
// starts, stops or changes a pod on the node; it never writes a mirror pod's
// status (the status manager does, through MirrorOf); and it never deletes
// a pod that is not a mirror pod. What exists in the API server it learns
// from the API source's watch (SetMirrors) and from its own requests.
//
// Life of a mirror pod:
//
//	static pod appears ─► create mirror (config.mirror = static's hash,
//	                      owner = this Node) once the Node has a UID
//	mirror deleted by someone ─► no longer watched ─► created again
//	mirror marked for deletion, or its hash differs from the static pod's
//	                      ─► deleted at once (grace 0, UID precondition),
//	                         then created again
//	static pod gone ─► mirror deleted (once every source has delivered)
package mirror
