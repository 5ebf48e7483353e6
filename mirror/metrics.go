package mirror

import "github.com/VictoriaMetrics/metrics"

var (
	createOK  = metrics.NewCounter(`podline_mirror_pod_ops_total{op="create",result="ok"}`)
	createErr = metrics.NewCounter(`podline_mirror_pod_ops_total{op="create",result="error"}`)
	deleteOK  = metrics.NewCounter(`podline_mirror_pod_ops_total{op="delete",result="ok"}`)
	deleteErr = metrics.NewCounter(`podline_mirror_pod_ops_total{op="delete",result="error"}`)
	rounds    = metrics.NewCounter(`podline_mirror_reconciles_total`)
)
