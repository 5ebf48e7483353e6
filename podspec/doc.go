// Package podspec says which parts of a pod spec podline supports and how
// each one reads: the downward API field paths and resource fields, the
// sources an environment variable may take its value from, the names a
// variable may have, the subPaths a mount may name and the default image
// pull policy.
//
// Static pods are validated against it (sources/) and containers are built
// from it (stages/, volumes/), so a pod that passes validation is a pod that
// runs, and what the API server accepts either resolves here or fails with
// the field named. Each rule lives here once; a copy elsewhere drifts.
//
// The package is pure: no I/O, no state, and no other podline package, so
// any of them may import it.
package podspec
