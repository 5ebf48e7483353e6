package volumes

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
)

// projectedPayload merges the volume's sources into one payload, in
// order. dir is the volume, read for the token written last time.
func (s *Source) projectedPayload(ctx context.Context, pod *v1.Pod, src *v1.ProjectedVolumeSource, dir string) (payload, error) {
	pl := payload{}
	for i := range src.Sources {
		p := &src.Sources[i]
		var err error
		switch {
		case p.ConfigMap != nil:
			err = s.projectObject(ctx, pl, pod, configMapRef(pod.Namespace, p.ConfigMap.Name), p.ConfigMap.Items, src.DefaultMode, isTrue(p.ConfigMap.Optional))
		case p.Secret != nil:
			err = s.projectObject(ctx, pl, pod, secretRef(pod.Namespace, p.Secret.Name), p.Secret.Items, src.DefaultMode, isTrue(p.Secret.Optional))
		case p.DownwardAPI != nil:
			err = s.downwardPayload(pl, pod, p.DownwardAPI.Items, src.DefaultMode)
		case p.ServiceAccountToken != nil:
			err = s.projectToken(ctx, pl, pod, p.ServiceAccountToken, src.DefaultMode, dir)
		case p.ClusterTrustBundle != nil:
			err = fmt.Errorf("%w: clusterTrustBundle projections (path %q)", ErrUnsupported, p.ClusterTrustBundle.Path)
		case p.PodCertificate != nil:
			err = fmt.Errorf("%w: podCertificate projections", ErrUnsupported)
		default:
			err = fmt.Errorf("%w: projected source %d names no type podline knows", ErrUnsupported, i)
		}
		if err != nil {
			return nil, err
		}
	}
	return pl, nil
}

func (s *Source) projectToken(ctx context.Context, pl payload, pod *v1.Pod, p *v1.ServiceAccountTokenProjection, defaultMode *int32, dir string) error {
	if err := checkPath(p.Path); err != nil {
		return fmt.Errorf("serviceAccountToken: %w", err)
	}
	// Only a regular file inside the current data directory counts: the
	// path was checked above, and the data directory is podline's own.
	previous, err := os.ReadFile(filepath.Join(dir, dataLink, p.Path))
	if err != nil {
		previous = nil
	}
	tok, err := s.token(ctx, pod, p, previous)
	if err != nil {
		return err
	}
	return pl.addFile(p.Path, tokenFile(pod, tok, defaultMode))
}
