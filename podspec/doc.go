// Package podspec turns a pod spec into what the runtime is given: the CRI
// sandbox and container configs (environment, mounts and subPath bind
// targets, resources, security, DNS, the spec hash that decides a
// restart), and says which parts of a spec podline supports and how each
// one reads: the downward API field paths and resource fields, the
// sources an environment variable may take its value from, the names a
// variable may have, the subPaths a mount may name and the default image
// pull policy.
//
// Static pods are validated against it (sources/) and containers are built
// from it (stages/, volumes/), so a pod that passes validation is a pod that
// runs, and what the API server accepts either resolves here or fails with
// the field named. Each rule lives here once; a copy elsewhere drifts.
//
// The package is pure: spec and node in, config out, table-tested without
// a runtime. What must touch the host (reading configMaps, binding a
// subPath, writing files) is done by the stages with what this package
// names; the one exception is ReadResolvConf, read once at start. It
// imports no podline package with state of its own.
package podspec
