package pullrecords

import (
	v1 "k8s.io/api/core/v1"
	kubeletv1alpha1 "k8s.io/kubelet/config/v1alpha1"
)

// Verdict is what a pod may do with an image that is on the node.
type Verdict int

const (
	// Use: the container starts from the image on the node.
	Use Verdict = iota
	// Verify: the container pulls the image, so that the registry checks
	// the pod's credentials; the image stays on the node either way.
	Verify
	// Refuse: verification is due but the pull policy is Never; the pod
	// is told the image is absent (ErrImageNeverPull), as the kubelet
	// tells it, so a pod learns nothing of images it may not use.
	Refuse
)

func (v Verdict) String() string {
	switch v {
	case Use:
		return "use"
	case Verify:
		return "verify"
	case Refuse:
		return "refuse"
	}
	return "unknown"
}

// The results of a check, as the kubelet's
// kubelet_imagemanager_image_mustpull_checks_total labels them.
const (
	ResultPolicyAllowed = "credentialPolicyAllowed"
	ResultRecordFound   = "credentialRecordFound"
	ResultMustVerify    = "mustAuthenticate"
	ResultError         = "error"
)

// learnLimit: a record that lists this many secrets for an image learns
// no more of them while checking (the kubelet's
// writeRecordWhileMatchingLimit), so namespaces that come and go cannot
// grow it without end; pulls still add theirs.
const learnLimit = 100

// Facts are what the node knows of an image that is present.
type Facts struct {
	// Repository is the image's normalized name without tag or digest,
	// the key of a record's credential mapping.
	Repository string
	// Record is the ImagePulledRecord of the image's ID; nil if none.
	Record *kubeletv1alpha1.ImagePulledRecord
	// Unreadable: a record of the image exists but could not be read.
	Unreadable bool
	// PulledByKubelet: a record of the image exists, or a pull of an
	// image of its repository is under way or was cut short. Only what is
	// not is "preloaded".
	PulledByKubelet bool
	// InRepository: the runtime knows the image under Repository, one of
	// its tags or digests being of it. A pod may name an image otherwise:
	// containerd resolves an image ID, and "sha256:<id>" parses as the
	// repository docker.io/library/sha256. Such a name earns no exemption
	// from the policy, which judges repositories: the allowlist's, or
	// preloaded (no record, no intent of that repository).
	InRepository bool
}

// Decision is a check's outcome.
type Decision struct {
	Verdict Verdict
	// Result labels the check for the metric.
	Result string
	// Learn is a secret of the pod the record should list from now on:
	// it matched by its credential hash under other coordinates, or by
	// its coordinates with a new hash (a rotated secret).
	Learn *kubeletv1alpha1.ImagePullSecret
}

// Decide is the check the kubelet's image pull manager makes before a pod
// uses an image present on the node. podSecrets gives the pod's pull
// secrets that hold credentials for the image's registry, each with the
// hash of its credential; it is called only when the record lists
// secrets, so a pod of a public image reads none.
func Decide(p *Policy, pullPolicy v1.PullPolicy, f Facts, podSecrets func() []kubeletv1alpha1.ImagePullSecret) Decision {
	d := decide(p, f, podSecrets)
	if d.Verdict == Verify && pullPolicy == v1.PullNever {
		d.Verdict = Refuse
	}
	return d
}

func decide(p *Policy, f Facts, podSecrets func() []kubeletv1alpha1.ImagePullSecret) Decision {
	verify := Decision{Verdict: Verify, Result: ResultMustVerify}
	if f.Unreadable {
		// Fail safe: what cannot be read cannot exempt anything.
		return Decision{Verdict: Verify, Result: ResultError}
	}
	if p.exempts(f.Repository, f.PulledByKubelet, f.InRepository) {
		return Decision{Verdict: Use, Result: ResultPolicyAllowed}
	}
	if f.Record == nil {
		return verify
	}
	cached, ok := f.Record.CredentialMapping[f.Repository]
	if !ok {
		return verify
	}
	if cached.NodePodsAccessible {
		return Decision{Verdict: Use, Result: ResultRecordFound}
	}
	if len(cached.KubernetesSecrets) == 0 {
		// Service accounts of a credential provider match nothing here:
		// podline runs no credential provider, so no pod presents one.
		return verify
	}
	canLearn := len(cached.KubernetesSecrets) < learnLimit
	for _, mine := range podSecrets() {
		for _, known := range cached.KubernetesSecrets {
			sameHash := known.CredentialHash != "" && mine.CredentialHash == known.CredentialHash
			sameSecret := mine.UID == known.UID && mine.Namespace == known.Namespace && mine.Name == known.Name
			switch {
			case sameHash:
				d := Decision{Verdict: Use, Result: ResultRecordFound}
				if !sameSecret && canLearn {
					d.Learn = &mine
				}
				return d
			case sameSecret && canLearn:
				// The secret the image was pulled with, its content
				// since changed: still the pod's authority, as the
				// kubelet holds (a rotation must not stop the pods).
				return Decision{Verdict: Use, Result: ResultRecordFound, Learn: &mine}
			}
		}
	}
	return verify
}
