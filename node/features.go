package node

import (
	"slices"

	v1 "k8s.io/api/core/v1"
)

// declaredFeatures are the node-declared features (status.declaredFeatures,
// sorted) podline has: the API server and scheduler read them to decide
// what a node can be asked to do. ExtendWebSocketsToKubelet says the
// node's port 10250 takes exec, attach and port-forward over WebSocket
// (v5 and the port-forward tunnel), so the API server proxies those
// streams to it as they come instead of translating them to SPDY itself.
// The kubelet's others (in-place resize of init containers and pod-level
// resources, restarting all containers on an exit) podline does not do,
// and declaring them would send it pods that need them.
var declaredFeatures = []string{"ExtendWebSocketsToKubelet"}

// setDeclaredFeatures writes podline's declared features into st, unless
// the API server was seen to drop them, in which case st keeps what the
// server has (nothing), so the difference is not a change to write every
// update period.
func setDeclaredFeatures(st *v1.NodeStatus, dropped bool) {
	if dropped {
		return
	}
	st.DeclaredFeatures = slices.Clone(declaredFeatures)
}

// dropsDeclaredFeatures says whether a write of sent came back as written
// without its declared features: an API server that does not know the
// field, or has NodeDeclaredFeatures off.
func dropsDeclaredFeatures(sent, written *v1.NodeStatus) bool {
	return len(sent.DeclaredFeatures) > 0 && len(written.DeclaredFeatures) == 0
}
