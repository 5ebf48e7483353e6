// Package pleg is podline's pod lifecycle event generator: it owns the
// observed runtime state of every pod (Cache) and the sources that keep it
// current and tell the pipeline which pods changed.
//
// A lifecycle source merges what it observes into the Cache and calls its
// notify function with the UID of each pod whose state moved; the pipeline
// answers with one pass of that pod. Today's source is the periodic full
// relist (Relister), behind the Source interface so event-driven sources can
// replace it without the pipeline noticing.
//
// The package reads the runtime; it never creates, stops or removes
// anything, and it makes no decisions about pods.
package pleg

import "context"

// Source keeps the Cache current until ctx ends.
type Source interface {
	Run(ctx context.Context)
}

var _ Source = (*Relister)(nil)
