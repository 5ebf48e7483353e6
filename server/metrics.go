package server

import "github.com/VictoriaMetrics/metrics"

// Interactive sessions by how podline carried them to the runtime:
// relayed as they came (SPDY, WebSocket up to v4), translated (WebSocket
// v5 to SPDY) or tunneled (SPDY inside WebSocket, port-forward); and,
// apart, those of each kind that failed on the way. A rise of failures
// after a runtime upgrade is a protocol the runtime stopped taking.
var (
	streamsRelayed    = metrics.NewCounter(`podline_server_streams_total{carried="relayed"}`)
	streamsTranslated = metrics.NewCounter(`podline_server_streams_total{carried="translated"}`)
	streamsTunneled   = metrics.NewCounter(`podline_server_streams_total{carried="tunneled"}`)

	relayFailures     = metrics.NewCounter(`podline_server_stream_failures_total{carried="relayed"}`)
	translateFailures = metrics.NewCounter(`podline_server_stream_failures_total{carried="translated"}`)
	tunnelFailures    = metrics.NewCounter(`podline_server_stream_failures_total{carried="tunneled"}`)
)
