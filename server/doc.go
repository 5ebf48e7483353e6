// Package server holds podline's HTTP endpoints: the healthz port (10248),
// the read-only port (10255: /pods, /spec/) and, later, the authenticated
// kubelet port. It serves what other packages hand it through functions
// and owns no pod state.
package server
