package pullrecords

import (
	"cmp"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1alpha1 "k8s.io/kubelet/config/v1alpha1"
)

// mergeCredentials returns the record of imageRef with creds added for
// repo, and whether that changed it; old is not modified. nil creds only
// make sure a record exists: the image is then known as pulled by the
// node agent, with no credentials that may use it (a pull cut short by
// a restart). Node-wide access supersedes secrets; secrets are kept one
// per namespace, name and UID, the newest hash winning, in that order.
func mergeCredentials(old *kubeletv1alpha1.ImagePulledRecord, imageRef, repo string, creds *kubeletv1alpha1.ImagePullCredentials, now time.Time) (*kubeletv1alpha1.ImagePulledRecord, bool) {
	if old == nil {
		r := &kubeletv1alpha1.ImagePulledRecord{
			LastUpdatedTime:   metav1.NewTime(now),
			ImageRef:          imageRef,
			CredentialMapping: map[string]kubeletv1alpha1.ImagePullCredentials{},
		}
		if creds != nil {
			r.CredentialMapping[repo] = *creds
		}
		return r, true
	}
	if creds == nil || (!creds.NodePodsAccessible && len(creds.KubernetesSecrets) == 0 && len(creds.KubernetesServiceAccounts) == 0) {
		return old, false
	}
	cur, found := old.CredentialMapping[repo]
	switch {
	case !found:
		cur = *creds
	case cur.NodePodsAccessible:
		return old, false
	case creds.NodePodsAccessible:
		cur = kubeletv1alpha1.ImagePullCredentials{NodePodsAccessible: true}
	default:
		var changed bool
		if cur.KubernetesSecrets, changed = mergeSecrets(cur.KubernetesSecrets, creds.KubernetesSecrets); !changed {
			return old, false
		}
	}
	r := old.DeepCopy()
	if r.CredentialMapping == nil {
		r.CredentialMapping = map[string]kubeletv1alpha1.ImagePullCredentials{}
	}
	r.CredentialMapping[repo] = cur
	r.LastUpdatedTime = metav1.NewTime(now)
	return r, true
}

type secretKey struct{ namespace, name, uid string }

func mergeSecrets(old, add []kubeletv1alpha1.ImagePullSecret) ([]kubeletv1alpha1.ImagePullSecret, bool) {
	hashes := make(map[secretKey]string, len(old)+len(add))
	for _, s := range old {
		hashes[secretKey{s.Namespace, s.Name, s.UID}] = s.CredentialHash
	}
	changed := false
	for _, s := range add {
		k := secretKey{s.Namespace, s.Name, s.UID}
		if h, ok := hashes[k]; !ok || h != s.CredentialHash {
			hashes[k], changed = s.CredentialHash, true
		}
	}
	if !changed {
		return old, false
	}
	out := make([]kubeletv1alpha1.ImagePullSecret, 0, len(hashes))
	for k, h := range hashes {
		out = append(out, kubeletv1alpha1.ImagePullSecret{Namespace: k.namespace, Name: k.name, UID: k.uid, CredentialHash: h})
	}
	slices.SortFunc(out, func(a, b kubeletv1alpha1.ImagePullSecret) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.UID, b.UID))
	})
	return out, true
}
