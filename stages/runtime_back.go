package stages

import "github.com/podline/podline/cri"

// RuntimeBack tells the pipeline that the runtime answers again after it
// was unavailable (its event stream reconnected and relisted). Every pod
// whose last pass failed because the runtime was unavailable gets its pass
// now, not at the end of its step back-off: a pod written while containerd
// restarted had failed a pass or more, and waited up to the back-off's cap
// after containerd was back, which made the node converge in 18 s at 100
// pods. The back-off still spaces retries while the runtime stays down;
// a pod that fails again backs off from where it was.
func (p *Pipeline) RuntimeBack() {
	p.mu.Lock()
	recs := make([]*podRecord, 0, len(p.records))
	for _, rec := range p.records {
		recs = append(recs, rec)
	}
	p.mu.Unlock()
	for _, rec := range recs {
		rec.mu.Lock()
		// A pass in flight owns sync; it will end, and decide, by itself.
		retry := !rec.inFlight && !rec.hold.until.IsZero() && cri.IsUnavailable(rec.sync.LastErr)
		if retry {
			rec.hold = passHold{}
		}
		rec.mu.Unlock()
		if retry {
			// Through the retry queue: the caller (the event stream) never
			// parks on a full window.
			runtimeBackPasses.Inc()
			p.retry.After(rec.uid, 0)
		}
	}
}
