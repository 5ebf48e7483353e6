package podstatus

import "github.com/VictoriaMetrics/metrics"

var (
	// patches by what became of a queued status: ok (patched), skipped (the
	// API object already had it), stale (its version was already sent),
	// gone (the API object no longer exists), error (the request failed).
	patchesOK      = metrics.NewCounter(`podline_status_patches_total{result="ok"}`)
	patchesSkipped = metrics.NewCounter(`podline_status_patches_total{result="skipped"}`)
	patchesStale   = metrics.NewCounter(`podline_status_patches_total{result="stale"}`)
	patchesGone    = metrics.NewCounter(`podline_status_patches_total{result="gone"}`)
	patchesError   = metrics.NewCounter(`podline_status_patches_total{result="error"}`)

	// deletes of gracefully deleted API pods: gone means the object had
	// already gone or been replaced by another pod of the same name.
	deletesOK    = metrics.NewCounter(`podline_status_deletes_total{result="ok"}`)
	deletesGone  = metrics.NewCounter(`podline_status_deletes_total{result="gone"}`)
	deletesError = metrics.NewCounter(`podline_status_deletes_total{result="error"}`)

	// watch hits: a pod's status was first computed against the watch's
	// copy of its object, without reading it; misses: the watch had no
	// copy of it (yet), so it was read. Conflicts: the object had moved on
	// from the watch's copy, so it was read and the patch sent again.
	watchHits      = metrics.NewCounter(`podline_status_watch_bases_total{result="hit"}`)
	watchMisses    = metrics.NewCounter(`podline_status_watch_bases_total{result="miss"}`)
	watchConflicts = metrics.NewCounter(`podline_status_watch_bases_total{result="conflict"}`)

	// drift checks: at a resync, the watch's copy of a pod whose status
	// was sent had moved on, so the fields this node owns were compared;
	// drifts found: someone else had changed one, and it is sent again.
	driftChecks = metrics.NewCounter(`podline_status_drift_checks_total`)
	driftsFound = metrics.NewCounter(`podline_status_drifts_total`)

	// syncSeconds is how long after the first unsent change a status
	// landed in the API server, retries and waiting for a mirror included.
	syncSeconds = metrics.NewHistogram(`podline_status_sync_seconds`)

	// unsentPods is, at the last resync, how many pods had a status the
	// API server has not got: it grows during an outage and drains after.
	unsentPods = metrics.NewGauge(`podline_status_unsent_pods`, nil)
)
