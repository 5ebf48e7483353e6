package pullrecords

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	kubeletv1alpha1 "k8s.io/kubelet/config/v1alpha1"

	"github.com/podline/podline/credentials"
)

// Check decides whether a pod may use image (ref), present on the node as
// img (the runtime's ImageStatus of it), under its pull policy. It reads
// memory only; podSecrets is called only when the image's record lists
// secrets. A secret that matched by its hash under other coordinates, or
// by its coordinates with a new hash, is added to the record (a file
// write) so that the next check finds it directly.
func (s *Store) Check(ref credentials.Reference, img *runtimeapi.Image, pullPolicy v1.PullPolicy, podSecrets func() []kubeletv1alpha1.ImagePullSecret) Decision {
	repo, imageRef := ref.Repository(), img.GetId()
	inRepo := namedIn(repo, img)
	s.mu.RLock()
	rec := s.records[imageRef]
	f := Facts{
		Repository:   repo,
		Record:       rec,
		InRepository: inRepo,
		// Hashing the ID costs a little; most nodes have no unreadable
		// record at all.
		Unreadable:      rec == nil && len(s.unreadable) > 0 && s.unreadable[fileName(imageRef)],
		PulledByKubelet: rec != nil || s.intentsByRepo[repo] > 0,
	}
	s.mu.RUnlock()
	d := Decide(s.policy, pullPolicy, f, podSecrets)
	countCheck(d.Result)
	if d.Learn != nil {
		creds := &kubeletv1alpha1.ImagePullCredentials{KubernetesSecrets: []kubeletv1alpha1.ImagePullSecret{*d.Learn}}
		if err := s.merge(imageRef, repo, creds); err != nil {
			s.log.Warn("cannot record a pull secret that matched an image pull record", "image", ref.String(), "imageRef", imageRef, "err", err)
		}
	}
	return d
}

// namedIn reports whether one of img's tags or digests is of repo. The
// runtime's names are fully qualified as a rule (containerd's are), so a
// comparison of the prefix answers; other forms are parsed.
func namedIn(repo string, img *runtimeapi.Image) bool {
	for _, names := range [][]string{img.GetRepoTags(), img.GetRepoDigests()} {
		for _, name := range names {
			if rest, ok := strings.CutPrefix(name, repo); ok && rest != "" && (rest[0] == ':' || rest[0] == '@') {
				return true
			}
			if r, err := credentials.ParseReference(name); err == nil && r.Repository() == repo {
				return true
			}
		}
	}
	return false
}

// SecretsOf is how a pod's credentials for an image appear in records:
// their secrets' coordinates and the hash of each credential.
func SecretsOf(creds []credentials.Credential) []kubeletv1alpha1.ImagePullSecret {
	out := make([]kubeletv1alpha1.ImagePullSecret, 0, len(creds))
	for _, c := range creds {
		if c.Secret == "" {
			continue
		}
		ns, name := c.SecretNamespaceName()
		out = append(out, kubeletv1alpha1.ImagePullSecret{UID: c.SecretUID, Namespace: ns, Name: name, CredentialHash: c.Hash()})
	}
	return out
}
