package pullrecords

import "github.com/VictoriaMetrics/metrics"

// Checks by result, with the kubelet's result labels
// (kubelet_imagemanager_image_mustpull_checks_total); the records and
// pull intents podline keeps, as its ondisk gauges count them.
var (
	checksPolicyAllowed = metrics.NewCounter(`podline_image_mustpull_checks_total{result="credentialPolicyAllowed"}`)
	checksRecordFound   = metrics.NewCounter(`podline_image_mustpull_checks_total{result="credentialRecordFound"}`)
	checksMustVerify    = metrics.NewCounter(`podline_image_mustpull_checks_total{result="mustAuthenticate"}`)
	checksError         = metrics.NewCounter(`podline_image_mustpull_checks_total{result="error"}`)

	recordsGauge = metrics.NewGauge(`podline_image_pulled_records`, nil)
	intentsGauge = metrics.NewGauge(`podline_image_pull_intents`, nil)
	// writeErrors counts record files that could not be written or
	// removed; the state in memory still answers until a restart.
	writeErrors = metrics.NewCounter(`podline_image_pull_record_write_errors_total`)
)

func countCheck(result string) {
	switch result {
	case ResultPolicyAllowed:
		checksPolicyAllowed.Inc()
	case ResultRecordFound:
		checksRecordFound.Inc()
	case ResultMustVerify:
		checksMustVerify.Inc()
	default:
		checksError.Inc()
	}
}
