package server

import "github.com/VictoriaMetrics/metrics"

// Interactive sessions by how podline carried them to the runtime:
// relayed as they came (SPDY, WebSocket up to v4), translated (WebSocket
// v5 to SPDY) or tunneled (SPDY inside WebSocket, port-forward), and those
// that failed on the way. A rise of "failed" after a runtime upgrade is a
// protocol the runtime stopped taking.
var (
	streamsRelayed    = metrics.NewCounter(`podline_server_streams_total{carried="relayed"}`)
	streamsTranslated = metrics.NewCounter(`podline_server_streams_total{carried="translated"}`)
	streamsTunneled   = metrics.NewCounter(`podline_server_streams_total{carried="tunneled"}`)
	streamsFailed     = metrics.NewCounter(`podline_server_streams_total{carried="failed"}`)
)
