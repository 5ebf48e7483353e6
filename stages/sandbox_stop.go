package stages

import "github.com/podline/podline/pleg"

// maxSandboxStops bounds the teardown sandbox stops under way at once.
//
// A stop waits on the runtime, which stops the pause container and tears
// the pod's network down (about 100 ms on containerd), and costs podline
// nothing while it waits. Held in a sandbox worker, as it once was, a mass
// delete went at 64 workers per 100 ms: 15.6 s for 10,000 pods before any
// work of podline's own, slower than starting them. So it runs outside the
// workers, as container kills do, and this bound keeps a mass delete from
// handing the runtime every stop at once.
const maxSandboxStops = 256

// sandboxStopSlots holds one token per stop under way, node-wide.
var sandboxStopSlots = make(chan struct{}, maxSandboxStops)

// readySandboxes lists the ids of rt's ready sandboxes.
func readySandboxes(rt *pleg.Pod) []string {
	if rt == nil {
		return nil
	}
	var ids []string
	for _, sb := range rt.Sandboxes {
		if sb.State == pleg.SandboxReady {
			ids = append(ids, sb.ID)
		}
	}
	return ids
}

// stopInBackground stops the sandboxes ids of w's pod, holding one of
// maxSandboxStops slots; the pass then returns to the stage, which finds
// them stopped and removes them.
func (s *SandboxStage) stopInBackground(w *Work, ids []string) error {
	select {
	case sandboxStopSlots <- struct{}{}:
	case <-w.Context().Done():
		return w.Context().Err()
	}
	defer func() { <-sandboxStopSlots }()
	for _, id := range ids {
		if err := s.stop(w, id); err != nil {
			return err
		}
	}
	return nil
}
