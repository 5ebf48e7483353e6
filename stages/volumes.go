package stages

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/internal/mountinfo"
	"github.com/podline/podline/internal/poduid"
	"github.com/podline/podline/podspec"
)

// ErrMount marks a volume that could not be set up; the pod waits in
// ContainerCreating and a FailedMount is reported.
var ErrMount = errors.New("mount failed")

// ContentSource fills the volumes whose files podline writes: configMap,
// secret, downwardAPI and projected (service account tokens included), and
// keeps them current. SetUp writes vol's files into dir, which exists; it
// is called again for the same dir when the volumes are stale, and must
// then leave files as they are or replace them atomically. From a pod's
// first SetUp until Release, the source watches what its volumes show and
// asks for a sync pass of the pod when something changed; that pass's
// volume stage asks Stale and, when stale, sets every content volume up
// again and reports Refreshed with the mark Stale gave. Rewrites happen
// only in passes, so they never race the pod's teardown.
type ContentSource interface {
	SetUp(ctx context.Context, pod *v1.Pod, vol *v1.Volume, dir string) error
	Stale(pod *v1.Pod) (mark uint64, stale bool)
	Refreshed(uid types.UID, mark uint64)
	Release(uid types.UID)
}

// refreshRetry is how soon a failed refresh of a running pod's volumes is
// tried again. The pod keeps running with the files it has, as on other
// nodes; a change of what failed (an object created again) brings a pass
// sooner.
const refreshRetry = 30 * time.Second

// VolumeStage sets up a pod's volumes before its sandbox starts, keeps its
// content volumes current while it runs and removes them after teardown.
type VolumeStage struct {
	Node *Node
	// Content fills configMap, secret, downwardAPI and projected volumes;
	// without it (tests) such volumes fail to mount.
	Content ContentSource
	Events  Recorder
}

func (s *VolumeStage) Handle(w *Work) Outcome {
	if w.Teardown {
		return s.teardown(w)
	}
	if w.Sync.VolumesReady {
		s.refresh(w)
		return Next()
	}
	pod := w.Pod
	var mark uint64
	if s.Content != nil {
		mark, _ = s.Content.Stale(pod)
	}
	// Directories cost a journalled write each; a pod without volumes gets
	// none.
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if err := s.setup(w.Context(), pod, vol); err != nil {
			w.Sync.StartBlocked = Waiting{Reason: "FailedMount", Message: s.failedMount(pod, vol, err)}
			return Fail(fmt.Errorf("%w: volume %q: %v", ErrMount, vol.Name, err))
		}
	}
	if s.Content != nil {
		s.Content.Refreshed(pod.UID, mark)
	}
	w.Sync.StartBlocked = Waiting{}
	w.Sync.VolumesReady = true
	return Next()
}

// refresh writes a running pod's content volumes again when they are
// stale. A failure leaves the pod running with the files it has and
// retries later; it does not fail the pass, which may have containers to
// restart.
func (s *VolumeStage) refresh(w *Work) {
	if s.Content == nil {
		return
	}
	pod := w.Pod
	mark, stale := s.Content.Stale(pod)
	if !stale {
		return
	}
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		if !podspec.IsContentVolume(vol) {
			continue
		}
		path, _ := podspec.VolumeHostPath(s.Node, pod, vol)
		if err := s.Content.SetUp(w.Context(), pod, vol, path); err != nil {
			if w.Context().Err() == nil {
				s.failedMount(pod, vol, err)
				w.RequeueAfter(refreshRetry)
			}
			return
		}
	}
	s.Content.Refreshed(pod.UID, mark)
}

// failedMount records the FailedMount event and returns its message.
func (s *VolumeStage) failedMount(pod *v1.Pod, vol *v1.Volume, err error) string {
	msg := fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", vol.Name, err)
	recorderOr(s.Events).PodEvent(pod, "", v1.EventTypeWarning, "FailedMount", msg)
	return msg
}

func (s *VolumeStage) setup(ctx context.Context, pod *v1.Pod, vol *v1.Volume) error {
	path, ok := podspec.VolumeHostPath(s.Node, pod, vol)
	if !ok {
		return errors.New("this volume type is not supported yet (emptyDir, hostPath, configMap, secret, downwardAPI and projected are)")
	}
	var err error
	switch {
	case podspec.IsContentVolume(vol) && s.Content == nil:
		err = errors.New("needs the API server (--kubeconfig)")
	case podspec.IsContentVolume(vol):
		if err = os.MkdirAll(path, 0o750); err == nil {
			err = s.Content.SetUp(ctx, pod, vol, path)
		}
	case vol.EmptyDir != nil:
		err = setupEmptyDir(path, s.emptyDirMarker(pod, vol), vol.EmptyDir, fsGroupOf(pod))
	case vol.HostPath != nil:
		err = checkHostPath(path, vol.HostPath.Type)
	}
	return err
}

// teardown unmounts the pod's volume mounts and, once no source has the
// pod, removes its directory. hostPath volumes are never touched, nor is
// anything still mounted when the directory is removed.
func (s *VolumeStage) teardown(w *Work) Outcome {
	w.Sync.VolumesReady = false
	if s.Content != nil {
		s.Content.Release(w.UID)
	}
	if !poduid.Valid(w.UID) {
		// Only an orphan's runtime labels can carry such a UID. podline
		// made no directory for it, and a path built from it could lead
		// anywhere: the runtime stages remove the orphan, this one leaves
		// the disk alone.
		return Next()
	}
	dir := s.Node.PodDir(w.UID)
	if err := unmountUnder(dir); err != nil {
		return Fail(fmt.Errorf("unmount volumes of %s: %w", w.PodName(), err))
	}
	if !w.Removed {
		return Next()
	}
	if err := removePodDir(s.Node, w.UID); err != nil {
		// Perhaps a mount newer than the shared reading of the table:
		// the retry reads it again.
		mountinfo.Changed()
		return Fail(fmt.Errorf("remove pod directory: %w", err))
	}
	return Next()
}
