// Package node owns what podline says about its node: capacity and
// allocatable resources (capacity less --kube-reserved, --system-reserved
// and the hard eviction thresholds), the pressure conditions the eviction
// thresholds imply, and, in cluster mode, the Node object: registration,
// the status (written when it changes, or every report period) and the
// Lease in kube-node-lease. It writes only its own Node (nodes/<name>/status
// after creation) and its own Lease; it never touches pods, and it reads
// no files itself: machine facts come from package machine.
package node
