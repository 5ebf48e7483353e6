package stages

import "github.com/VictoriaMetrics/metrics"

// Per-stage metrics, one variable per stage so the hot path never looks a
// metric up by name.
var (
	stageQueueWait = [NumStages]*metrics.Histogram{
		metrics.NewHistogram(`podline_stage_queue_wait_seconds{stage="admit"}`),
		metrics.NewHistogram(`podline_stage_queue_wait_seconds{stage="volumes"}`),
		metrics.NewHistogram(`podline_stage_queue_wait_seconds{stage="sandbox"}`),
		metrics.NewHistogram(`podline_stage_queue_wait_seconds{stage="containers"}`),
		metrics.NewHistogram(`podline_stage_queue_wait_seconds{stage="status"}`),
	}
	stageDuration = [NumStages]*metrics.Histogram{
		metrics.NewHistogram(`podline_stage_duration_seconds{stage="admit"}`),
		metrics.NewHistogram(`podline_stage_duration_seconds{stage="volumes"}`),
		metrics.NewHistogram(`podline_stage_duration_seconds{stage="sandbox"}`),
		metrics.NewHistogram(`podline_stage_duration_seconds{stage="containers"}`),
		metrics.NewHistogram(`podline_stage_duration_seconds{stage="status"}`),
	}
	stageQueueDepth = [NumStages]*metrics.Gauge{
		metrics.NewGauge(`podline_stage_queue_depth{stage="admit"}`, nil),
		metrics.NewGauge(`podline_stage_queue_depth{stage="volumes"}`, nil),
		metrics.NewGauge(`podline_stage_queue_depth{stage="sandbox"}`, nil),
		metrics.NewGauge(`podline_stage_queue_depth{stage="containers"}`, nil),
		metrics.NewGauge(`podline_stage_queue_depth{stage="status"}`, nil),
	}
	stageFailures = [NumStages]*metrics.Counter{
		metrics.NewCounter(`podline_stage_failures_total{stage="admit"}`),
		metrics.NewCounter(`podline_stage_failures_total{stage="volumes"}`),
		metrics.NewCounter(`podline_stage_failures_total{stage="sandbox"}`),
		metrics.NewCounter(`podline_stage_failures_total{stage="containers"}`),
		metrics.NewCounter(`podline_stage_failures_total{stage="status"}`),
	}

	passesInFlight = metrics.NewGauge(`podline_pipeline_passes_in_flight`, nil)
	passesTotal    = metrics.NewCounter(`podline_pipeline_passes_total`)
	passesAsync    = metrics.NewCounter(`podline_pipeline_background_steps_total`)
	// A pass asked for while its pod backs off from a failed pass, left to
	// the retry at the end of the back-off.
	passesHeld = metrics.NewCounter(`podline_pipeline_passes_held_total`)
	// A held pass started early because the runtime answers again.
	runtimeBackPasses = metrics.NewCounter(`podline_pipeline_runtime_back_passes_total`)
	// A stage queue that refused a pass the window had room for: a
	// consumer descheduled mid-take; the pass waited for it.
	queueRefusals = metrics.NewCounter(`podline_pipeline_queue_waits_total`)
	podsKnown     = metrics.NewGauge(`podline_pipeline_pods`, nil)
	podStartTime  = metrics.NewHistogram(`podline_pod_start_duration_seconds`)
	// From a container's exit (as the kernel or the runtime timed it) to
	// the pod status that shows it.
	exitToStatus = metrics.NewHistogram(`podline_container_exit_to_status_seconds`)
	podsRejected = metrics.NewCounter(`podline_pods_rejected_total`)
)
