// Package pullrecords decides whether a pod may start from an image that
// is already on the node, as the kubelet does since
// KubeletEnsureSecretPulledImages (beta and on by default in 1.35): a
// private image pulled with one namespace's pull secret must not run from
// another namespace that lacks the credentials, just because the node has
// it.
//
// The node keeps a record of which credentials pulled each image (by the
// runtime's image ID): the pull secrets' namespace, name and UID with a
// hash of the credential, or "every pod on the node" for an anonymous
// pull. A pod may use an image present on the node when the
// imagePullCredentialsVerificationPolicy exempts it, or when the record
// lists one of the pod's own secrets (by coordinates, or by the hash of
// the same credential in another secret); otherwise its container pulls
// the image, and the registry checks the pod's credentials.
//
// The records are the kubelet's files, ImagePullIntent and
// ImagePulledRecord (kubelet.config.k8s.io/v1alpha1), under
// <root-dir>/image_manager/pulling and .../pulled, so they survive
// restarts. They are read once when podline starts and then kept in
// memory: the check on the pod start path reads no file and makes no
// runtime call, and a file is written only when a record changes (a
// pull, a new secret that matched).
//
// Decide is the decision itself, a pure function of the policy, the
// image's record and the pod's secrets; Store holds the records and
// writes them.
package pullrecords
