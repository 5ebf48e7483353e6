package sources

import "github.com/VictoriaMetrics/metrics"

var (
	fileManifestErrors = metrics.NewCounter(`podline_source_manifest_errors_total{source="file"}`)
	httpManifestErrors = metrics.NewCounter(`podline_source_manifest_errors_total{source="http"}`)
	// rejectedPods counts pods the merger refused (name held by another UID,
	// duplicate or missing UID), once per rejection episode.
	rejectedPods = metrics.NewCounter(`podline_source_rejected_pods_total`)
	fileScans    = metrics.NewCounter(`podline_source_file_scans_total`)
	// fileNameScans counts rescans of the files named by inotify events.
	fileNameScans = metrics.NewCounter(`podline_source_file_event_scans_total`)
	httpFetches   = metrics.NewCounter(`podline_source_http_fetches_total`)
	// fileUnwatched is 1 while inotify cannot watch the manifest path and
	// only the periodic rescans (--file-check-frequency) find changes.
	fileUnwatched = metrics.NewGauge(`podline_source_file_unwatched`, nil)
)
