package fake

// podUIDLabel is the label a kubelet puts on every sandbox and container of
// a pod, and filters on each time it reads one pod's state.
const podUIDLabel = "io.kubernetes.pod.uid"

// podIndex finds sandboxes and containers by their pod-UID label, so that
// a list filtered on it costs the pod's few records instead of a scan of
// every record on the node (10,000 pods make a scan per pod sync quadratic).
// It is guarded by Server.mu.
type podIndex struct {
	sandboxes  map[string]map[string]*sandbox
	containers map[string]map[string]*container
}

func newPodIndex() podIndex {
	return podIndex{
		sandboxes:  make(map[string]map[string]*sandbox),
		containers: make(map[string]map[string]*container),
	}
}

func (ix *podIndex) addSandbox(sb *sandbox) { add(ix.sandboxes, sb.labels[podUIDLabel], sb.id, sb) }

func (ix *podIndex) removeSandbox(sb *sandbox) { remove(ix.sandboxes, sb.labels[podUIDLabel], sb.id) }

func (ix *podIndex) addContainer(c *container) {
	add(ix.containers, c.labels[podUIDLabel], c.id, c)
}

func (ix *podIndex) removeContainer(c *container) {
	remove(ix.containers, c.labels[podUIDLabel], c.id)
}

// sandboxesOf returns the sandboxes whose label matches selector's pod
// UID; ok is false when selector does not name one and a scan is needed.
func (ix *podIndex) sandboxesOf(selector map[string]string) (sbs map[string]*sandbox, ok bool) {
	uid := selector[podUIDLabel]
	if uid == "" {
		return nil, false
	}
	return ix.sandboxes[uid], true
}

// containersOf is sandboxesOf for containers.
func (ix *podIndex) containersOf(selector map[string]string) (cs map[string]*container, ok bool) {
	uid := selector[podUIDLabel]
	if uid == "" {
		return nil, false
	}
	return ix.containers[uid], true
}

func add[T any](m map[string]map[string]T, uid, id string, v T) {
	if uid == "" {
		return
	}
	ids := m[uid]
	if ids == nil {
		ids = make(map[string]T, 1)
		m[uid] = ids
	}
	ids[id] = v
}

func remove[T any](m map[string]map[string]T, uid, id string) {
	ids := m[uid]
	delete(ids, id)
	if len(ids) == 0 {
		delete(m, uid)
	}
}
