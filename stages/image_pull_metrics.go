package stages

import "github.com/VictoriaMetrics/metrics"

// Image pull metrics: pulls the runtime was asked for, and pods that
// shared one instead of asking again.
var (
	pullsSucceeded = metrics.NewCounter(`podline_image_pulls_total{result="success"}`)
	pullsFailed    = metrics.NewCounter(`podline_image_pulls_total{result="failure"}`)
	pullsJoined    = metrics.NewCounter(`podline_image_pulls_shared_total`)
	pullDuration   = metrics.NewHistogram(`podline_image_pull_duration_seconds`)
	// How long pulls waited for a slot under --serialize-image-pulls or
	// --max-parallel-image-pulls.
	pullSlotWait = metrics.NewHistogram(`podline_image_pull_slot_wait_seconds`)
)
