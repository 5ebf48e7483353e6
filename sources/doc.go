// Package sources turns the places podline's desired pods come from — a
// manifest directory (file), a manifest URL (http) and the API server (api) —
// into one ordered stream of pod changes.
//
// It owns manifest decoding, validation and defaulting, the identity of static
// pods (UID, name and annotations), and the Merger that diffs each source's
// full snapshots into ADD/UPDATE/DELETE/REMOVE/RECONCILE updates.
//
// It must not touch the runtime or the node: it never starts, stops or
// inspects containers, and it never writes to the API server. What to do with
// an update is the consumer's business.
//
// Data flow:
//
//	FileSource ─┐
//	URLSource  ─┼─ Merger.Set(source, snapshot) ─► diff per source ─► Updates()
//	API watcher ┘
package sources
