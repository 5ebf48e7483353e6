// Package podstatus sends pod statuses from the status store to the API
// server, as the kubelet's status manager does: each changed status is
// patched to pods/<name>/status (a static pod's to its mirror pod), at most
// once per version, and a gracefully deleted pod's API object is finally
// deleted once its last status has landed.
//
// The package owns what was last sent for each pod and the retry of what
// was not. It never touches the runtime, the pipeline or the store's
// contents: a failed send changes nothing on the node, it is only retried.
// The client's token bucket (kubeapi) is the one rate limit; this package
// bounds only its concurrency.
//
// # Timeline of one pod
//
//	store.Set ─▶ Notify ─▶ queue ─▶ worker: read store ─▶ (API status unknown:
//	before the first write the watch's copy of the object, else a GET) ─▶
//	merge with fields others own ─▶ patch if it differs ─▶ sent=version
//	               ▲                                      │ failure
//	               └──────────── back-off, resync ◀───────┘
//	resync: the watch's copy moved on and differs in a field this node
//	owns (another writer's Ready=False) ─▶ queue ─▶ patch against that copy
//	Terminated ─▶ once sent ≥ final version ─▶ DELETE (grace 0, UID precondition)
//	store.Delete ─▶ Notify ─▶ worker finds no pod ─▶ forget
package podstatus
