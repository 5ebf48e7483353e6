package pullrecords

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	kubeletv1alpha1 "k8s.io/kubelet/config/v1alpha1"

	"github.com/podline/podline/credentials"
)

// BenchmarkCheck is the check on the pod start path of a node with 1,000
// recorded images: a pod whose secret the record lists (the pod's secrets
// given already looked up), and a pod of an anonymously pulled image.
func BenchmarkCheck(b *testing.B) {
	s := openStore(b, b.TempDir(), "")
	inA := cred("a", "pull", "uid-a", "right")
	for i := range 1000 {
		id := fmt.Sprintf("sha256:%064d", i)
		r := ref(b, fmt.Sprintf("r.io/app-%d:1", i))
		if i%2 == 0 {
			pull(b, s, r, id, &inA)
		} else {
			pull(b, s, r, id, nil)
		}
	}
	secrets := SecretsOf([]credentials.Credential{inA})
	podSecrets := func() []kubeletv1alpha1.ImagePullSecret { return secrets }
	for _, tc := range []struct {
		name string
		i    int
	}{{"secret", 500}, {"anonymous", 501}} {
		r := ref(b, fmt.Sprintf("r.io/app-%d:1", tc.i))
		img := named(r, fmt.Sprintf("sha256:%064d", tc.i))
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if d := s.Check(r, img, v1.PullIfNotPresent, podSecrets); d.Verdict != Use {
					b.Fatal(d)
				}
			}
		})
	}
}

// BenchmarkOpen is podline's start with the records of 1,000 images on
// disk: every file read and decoded once.
func BenchmarkOpen(b *testing.B) {
	dir := b.TempDir()
	s := openStore(b, dir, "")
	inA := cred("a", "pull", "uid-a", "right")
	for i := range 1000 {
		pull(b, s, ref(b, fmt.Sprintf("r.io/app-%d:1", i)), fmt.Sprintf("sha256:%064d", i), &inA)
	}
	b.ReportAllocs()
	for b.Loop() {
		if s := openStore(b, dir, ""); len(s.records) != 1000 {
			b.Fatal(len(s.records))
		}
	}
}
