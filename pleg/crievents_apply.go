package pleg

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// apply merges one event into the cache. It returns the event's pod, whether
// the cache changed, and whether the event was stale: older than the newest
// event already applied for its subject, or about a subject already deleted.
//
// An event carries snapshots: its sandbox's status and the statuses of all
// that sandbox's containers. Each snapshot is merged on its own, and only if
// the event is not older than the newest one applied for that object, so a
// late event never rolls back what a later one showed. The cache's own
// monotonic merge rules apply on top.
func (s *CRIEvents) apply(ev *runtimeapi.ContainerEventResponse, now time.Time) (uid types.UID, changed, stale bool) {
	s.objects.expire(now)
	s.objects.maybePrune(s.cache, now)

	uid, name, namespace, ok := s.owner(ev)
	if !ok {
		return "", false, false // not podline's
	}
	at := normalizeTimestamp(ev.GetCreatedAt())
	id := ev.GetContainerId()
	deleted := ev.GetContainerEventType() == runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT
	if !deleted && !s.objects.admits(id, at) {
		return uid, false, true
	}

	sbst := ev.GetPodSandboxStatus()
	if sbst != nil && s.objects.admits(sbst.GetId(), at) {
		if s.cache.UpsertSandbox(uid, name, namespace, sandboxFromEvent(sbst)) {
			changed = true
		}
		s.objects.applied(sbst.GetId(), uid, "", at)
	}
	for _, cs := range ev.GetContainersStatuses() {
		cid := cs.GetId()
		if cid == "" || (deleted && cid == id) || !s.objects.admits(cid, at) {
			continue
		}
		sandboxID := s.sandboxOf(uid, cid, sbst)
		if sandboxID == "" {
			// Without its sandbox a container could not be dropped with it;
			// the next event with a sandbox status or a relist brings it.
			s.log.Debug("container event without a known sandbox", "pod", uid, "container", cid)
			continue
		}
		if s.objects.gone(sandboxID) {
			// Its sandbox was deleted, and the containers with it: cached,
			// it would hang under a sandbox the pod no longer has.
			continue
		}
		if s.cache.UpsertContainer(uid, containerFromEvent(cs, sandboxID)) {
			changed = true
		}
		s.objects.applied(cid, uid, sandboxID, at)
	}
	// A deletion is final whatever its timestamp: the runtime cannot have
	// anything newer to say about the object.
	if deleted && s.remove(uid, id, sbst, now) {
		changed = true
	}
	return uid, changed, false
}

// owner finds the pod an event belongs to: from its sandbox's labels, from
// what earlier events taught, from its containers' labels, and for a
// deletion without any of these (a sandbox's own DELETED event carries no
// status) from the cache.
func (s *CRIEvents) owner(ev *runtimeapi.ContainerEventResponse) (uid types.UID, name, namespace string, ok bool) {
	if sbst := ev.GetPodSandboxStatus(); sbst != nil {
		return PodIdentity(sbst.GetLabels())
	}
	id := ev.GetContainerId()
	if o := s.objects.byID[id]; o != nil {
		return o.uid, "", "", true
	}
	for _, cs := range ev.GetContainersStatuses() {
		if uid, name, namespace, ok := PodIdentity(cs.GetLabels()); ok {
			return uid, name, namespace, true
		}
	}
	if ev.GetContainerEventType() == runtimeapi.ContainerEventType_CONTAINER_DELETED_EVENT {
		if uid, ok := s.cachedOwner(id); ok {
			return uid, "", "", true
		}
	}
	return "", "", "", false
}

// cachedOwner scans the cache for the pod holding a sandbox or container.
// It costs one snapshot read per pod, and runs only for a deletion of an
// object no event described before (say, one that only a relist saw).
func (s *CRIEvents) cachedOwner(id string) (types.UID, bool) {
	for _, uid := range s.cache.UIDs() {
		if p := s.cache.Get(uid); p.Sandbox(id) != nil || p.Container(id) != nil {
			return uid, true
		}
	}
	return "", false
}

// sandboxOf names a container's sandbox. A CRI ContainerStatus does not, but
// the event's sandbox status does: every status it carries is one of that
// sandbox's containers.
func (s *CRIEvents) sandboxOf(uid types.UID, containerID string, sbst *runtimeapi.PodSandboxStatus) string {
	if sbst != nil {
		return sbst.GetId()
	}
	if o := s.objects.byID[containerID]; o != nil && o.sandboxID != "" {
		return o.sandboxID
	}
	if c := s.cache.Get(uid).Container(containerID); c != nil {
		return c.SandboxID
	}
	return ""
}

// remove applies a DELETED event. containerd sends a sandbox's events with
// the sandbox id as the container id, so the id alone does not tell which
// kind of object went away.
func (s *CRIEvents) remove(uid types.UID, id string, sbst *runtimeapi.PodSandboxStatus, now time.Time) bool {
	p := s.cache.Get(uid)
	isSandbox := sbst.GetId() == id
	if !isSandbox {
		if o := s.objects.byID[id]; o != nil {
			isSandbox = o.sandbox
		} else {
			isSandbox = p.Sandbox(id) != nil
		}
	}
	if !isSandbox {
		s.objects.bury(id, uid, false, now)
		return s.cache.RemoveContainer(uid, id)
	}
	if p != nil {
		for _, c := range p.Containers {
			if c.SandboxID == id {
				s.objects.bury(c.ID, uid, false, now)
			}
		}
	}
	s.objects.bury(id, uid, true, now)
	return s.cache.RemoveSandbox(uid, id)
}

// sandboxFromEvent converts an event's sandbox status, reading its time in
// whatever unit the runtime used.
func sandboxFromEvent(st *runtimeapi.PodSandboxStatus) *Sandbox {
	sb := SandboxFromStatus(st)
	sb.CreatedAt = normalizeTimestamp(st.GetCreatedAt())
	return sb
}

// containerFromEvent converts a container status carried by an event,
// reading its times in whatever unit the runtime used.
func containerFromEvent(st *runtimeapi.ContainerStatus, sandboxID string) *Container {
	c := ContainerFromStatus(st, sandboxID)
	c.CreatedAt = normalizeTimestamp(st.GetCreatedAt())
	c.StartedAt = normalizeTimestamp(st.GetStartedAt())
	c.FinishedAt = normalizeTimestamp(st.GetFinishedAt())
	return c
}
