package sources

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// maxManifestBytes caps one manifest file or URL body. The kubelet reads
// either whole, whatever its size; podline refuses a larger one before
// reading it (by its size or Content-Length) or as soon as it has read past
// the cap, so a runaway file or server cannot exhaust its memory. Static
// pods are a few KiB each. The cap is set by what YAML costs to decode: a
// 10 MiB PodList of small pods allocated 2.2 GiB and held 0.8 GiB (845 MiB
// of it the YAML to JSON conversion alone); 1 MiB is a tenth of that.
const maxManifestBytes = 1 << 20

// maxManifestPods caps the pods of one manifest, counted before they are
// decoded: each decoded pod costs kilobytes, and a node runs --max-pods
// (110 by default) in all.
const maxManifestPods = 1000

// errTooLarge says what is too large and what to do about it.
func errTooLarge(what string, size int64) error {
	if size > 0 {
		return newClassError(ErrFetch, fmt.Sprintf("%s is %d bytes, more than the %d MiB a manifest may have: split it", what, size, maxManifestBytes>>20), nil)
	}
	return newClassError(ErrFetch, fmt.Sprintf("%s is more than the %d MiB a manifest may have: split it", what, maxManifestBytes>>20), nil)
}

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
