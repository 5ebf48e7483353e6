//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The image credential verification policies on a node's own images: the
// busybox the harness imports into containerd is preloaded (podline never
// pulled it). With pull policy Never a pod may start from it only where
// the policy exempts it without verification; where verification is due
// the kubelet says the image is absent, and so does podline. The image is
// spelled short in the pods and fully in the allowlist, as the
// KubeletConfiguration wants it.
func TestImageCredentialPolicies(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		runs  bool
	}{
		{nil, true}, // NeverVerifyPreloadedImages, the default
		{[]string{"--image-pull-credentials-verification-policy=NeverVerify"}, true},
		{[]string{"--image-pull-credentials-verification-policy=NeverVerifyAllowlistedImages",
			"--preloaded-images-verification-allowlist=docker.io/library/busybox"}, true},
		{[]string{"--image-pull-credentials-verification-policy=NeverVerifyAllowlistedImages",
			"--preloaded-images-verification-allowlist=docker.io/library/alpine,registry.k8s.io/*"}, false},
		{[]string{"--image-pull-credentials-verification-policy=AlwaysVerify"}, false},
	} {
		t.Run(fmt.Sprint(tc.flags), func(t *testing.T) {
			a := startAgent(t, tc.flags...)
			a.writeManifest("local.yaml", imagePod("local", "busybox:1.36", "Never"))
			if tc.runs {
				a.waitRunning("local", 30*time.Second)
				return
			}
			p := a.waitPod("local", "ErrImageNeverPull", 30*time.Second, pullWaitIs("ErrImageNeverPull"))
			if want := `Container image "busybox:1.36" is not present with pull policy of Never`; pullWaitMessage(p) != want {
				t.Errorf("message %q, want %q", pullWaitMessage(p), want)
			}
			// The records are where the kubelet keeps them.
			for _, d := range []string{"pulling", "pulled"} {
				if st, err := os.Stat(filepath.Join(a.root, "image_manager", d)); err != nil || st.Mode().Perm() != 0o700 {
					t.Errorf("image_manager/%s: %v, %v; want a directory 0700", d, st, err)
				}
			}
		})
	}
}

// A policy podline does not know, or an allowlist it cannot read, stops
// it at start with the flag and the value named.
func TestImageCredentialPolicyRefused(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--image-pull-credentials-verification-policy=Sometimes"}, `--image-pull-credentials-verification-policy="Sometimes"`},
		{[]string{"--preloaded-images-verification-allowlist=docker.io/library/busybox"}, `--preloaded-images-verification-allowlist="docker.io/library/busybox"`},
	} {
		out, err := exec.Command(podlineBin, tc.flags...).CombinedOutput()
		if err == nil || !contains(string(out), tc.want) {
			t.Errorf("%v: exit %v, output %.300q; want a refusal naming %s", tc.flags, err, out, tc.want)
		}
	}
}
