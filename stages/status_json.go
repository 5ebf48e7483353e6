package stages

import (
	"encoding/json"
	"fmt"
)

// PodsJSON returns every pod with its status, each encoded as an item of
// the kubelet's /pods list, ordered by namespace and name. A pod is
// encoded once per status and the encoding kept until its status changes:
// a client polling /pods at 10,000 pods pays for the pods that changed
// since, not for a copy and an encoding of every one.
func (s *StatusStore) PodsJSON() ([][]byte, error) {
	entries := s.sorted()
	out := make([][]byte, len(entries))
	for i, e := range entries {
		b, err := e.encoded()
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}

// encoded returns the entry's pod and status as JSON, encoding them at
// the first call. Two callers may both encode; either result is the same.
func (e *statusEntry) encoded() ([]byte, error) {
	if b := e.json.Load(); b != nil {
		return *b, nil
	}
	// A shallow copy to put the status beside the spec: nothing shared is
	// written.
	p := *e.pod
	p.Status = e.status
	b, err := json.Marshal(&p)
	if err != nil {
		return nil, fmt.Errorf("encode pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	e.json.Store(&b)
	return b, nil
}
