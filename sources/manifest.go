package sources

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// maxManifestBytes caps one manifest file or URL body, as kubelet does: a
// runaway file must not exhaust podline's memory.
const maxManifestBytes = 10 << 20

// loadStatic turns manifest data into ready static pods: decode, give each
// pod its static identity, default, validate. Any bad pod fails the whole
// manifest, so a half-valid file never changes what runs.
func loadStatic(data []byte, source, location, nodeName string) ([]*v1.Pod, error) {
	pods, err := Decode(data)
	if err != nil {
		return nil, err
	}
	if len(pods) == 0 {
		return nil, nil
	}
	for _, p := range pods {
		name := p.Name
		if err := MakeStatic(p, source, location, nodeName); err != nil {
			return nil, err
		}
		ApplyDefaults(p)
		if errs := Validate(p); len(errs) > 0 {
			err := invalidError(errs)
			if len(pods) > 1 {
				err = newClassError(ErrInvalid, fmt.Sprintf("pod %q: %v", name, err), err)
			}
			return nil, err
		}
	}
	return pods, nil
}
