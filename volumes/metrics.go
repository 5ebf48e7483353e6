package volumes

import "github.com/VictoriaMetrics/metrics"

// volumeKind indexes the per-type metrics.
type volumeKind int

const (
	kindConfigMap volumeKind = iota
	kindSecret
	kindDownwardAPI
	kindProjected
	numKinds
)

// setupResult is how one SetUp ended.
type setupResult int

const (
	resultWritten   setupResult = iota // new files were switched in
	resultUnchanged                    // the volume already held them
	resultError
	numResults
)

// One variable per type and result, so SetUp never looks a metric up by
// name.
var (
	setupsTotal = [numKinds][numResults]*metrics.Counter{
		kindConfigMap: {
			metrics.NewCounter(`podline_volume_setups_total{type="configMap",result="written"}`),
			metrics.NewCounter(`podline_volume_setups_total{type="configMap",result="unchanged"}`),
			metrics.NewCounter(`podline_volume_setups_total{type="configMap",result="error"}`),
		},
		kindSecret: {
			metrics.NewCounter(`podline_volume_setups_total{type="secret",result="written"}`),
			metrics.NewCounter(`podline_volume_setups_total{type="secret",result="unchanged"}`),
			metrics.NewCounter(`podline_volume_setups_total{type="secret",result="error"}`),
		},
		kindDownwardAPI: {
			metrics.NewCounter(`podline_volume_setups_total{type="downwardAPI",result="written"}`),
			metrics.NewCounter(`podline_volume_setups_total{type="downwardAPI",result="unchanged"}`),
			metrics.NewCounter(`podline_volume_setups_total{type="downwardAPI",result="error"}`),
		},
		kindProjected: {
			metrics.NewCounter(`podline_volume_setups_total{type="projected",result="written"}`),
			metrics.NewCounter(`podline_volume_setups_total{type="projected",result="unchanged"}`),
			metrics.NewCounter(`podline_volume_setups_total{type="projected",result="error"}`),
		},
	}
	tokenRequestsOK     = metrics.NewCounter(`podline_volume_token_requests_total{result="ok"}`)
	tokenRequestsFailed = metrics.NewCounter(`podline_volume_token_requests_total{result="error"}`)
	// trackedPods are the pods whose content volumes are kept current.
	trackedPods = metrics.NewGauge(`podline_volume_tracked_pods`, nil)
)

// refreshTrigger is why a pod's content volumes are written again.
type refreshTrigger int

const (
	triggerObject   refreshTrigger = iota // a configMap or secret changed
	triggerToken                          // a token fell due
	triggerMetadata                       // a label, annotation or resource changed
	numTriggers
)

// refreshTriggers counts pods made stale, per cause; what was written
// then shows in podline_volume_setups_total.
var refreshTriggers = [numTriggers]*metrics.Counter{
	triggerObject:   metrics.NewCounter(`podline_volume_refresh_triggers_total{reason="object"}`),
	triggerToken:    metrics.NewCounter(`podline_volume_refresh_triggers_total{reason="token"}`),
	triggerMetadata: metrics.NewCounter(`podline_volume_refresh_triggers_total{reason="metadata"}`),
}
