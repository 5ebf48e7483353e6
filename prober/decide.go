package prober

// ContainerProbeStatus is what a container's probes say now.
type ContainerProbeStatus struct {
	// Started: the container runs and its startup probe, if any, has
	// succeeded (containerStatuses[].started).
	Started bool
	// Ready: started, and its readiness probe, if any, stands at success
	// (containerStatuses[].ready, and through it the pod's Ready).
	Ready bool
	// Kill is set when a liveness or startup probe failed: the container
	// must be stopped (and, per its restart policy, started again).
	Kill *KillReason
}

// KillReason says why a container must be killed.
type KillReason struct {
	// Kind is Liveness or Startup.
	Kind Kind
	// Message is the kubelet's, for the Killing event: "Container app
	// failed liveness probe, will be restarted".
	Message string
	// GracePeriod is the probe's terminationGracePeriodSeconds, which
	// overrides the pod's; nil to use the pod's.
	GracePeriod *int64
}

// probeView is one probe of a container as the decision reads it.
type probeView struct {
	has    bool // the container has a probe of this kind
	result result
	grace  *int64
}

// decideInput is everything the decision reads of one container.
type decideInput struct {
	name    string
	running bool
	// restart: a killed container will be started again (its restart
	// policy is not Never); only the kill message depends on it.
	restart bool
	probes  [numKinds]probeView
}

// decide turns a container's probe results into its status, as the
// kubelet's status and sync code read them:
//   - a container that does not run is neither started nor ready, and is
//     not killed (there is nothing to kill);
//   - started: no startup probe, or it succeeded;
//   - ready: started, and no readiness probe or it stands at success;
//   - a liveness failure kills, else a startup failure kills; liveness
//     first, as the kubelet checks it first.
func decide(in decideInput) ContainerProbeStatus {
	if !in.running {
		return ContainerProbeStatus{}
	}
	st := in.probes[Startup]
	rd := in.probes[Readiness]
	var out ContainerProbeStatus
	out.Started = !st.has || st.result == resultSuccess
	out.Ready = out.Started && (!rd.has || rd.result == resultSuccess)
	for _, k := range [...]Kind{Liveness, Startup} {
		if p := in.probes[k]; p.has && p.result == resultFailure {
			out.Kill = &KillReason{Kind: k, Message: killMessage(in.name, k, in.restart)}
			if p.grace != nil {
				g := *p.grace // the caller's copy, not the probe's
				out.Kill.GracePeriod = &g
			}
			break
		}
	}
	return out
}

func killMessage(container string, k Kind, restart bool) string {
	m := "Container " + container + " failed " + k.lower() + " probe"
	if restart {
		m += ", will be restarted"
	}
	return m
}
