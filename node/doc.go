// Package node owns what podline says about its node: capacity and
// allocatable resources (capacity less --kube-reserved, --system-reserved
// and the hard eviction thresholds), and, in cluster mode, the Node object.
// It reads no files itself: machine facts come from package machine.
package node
