package main

import (
	"encoding/json"
	"flag"
	"strings"
	"testing"
)

// The two KubeletConfiguration fields of the credential check are flags
// named after them, validated as the kubelet validates the fields, with
// errors that name the flag and the value; /configz shows them under
// their v1beta1 names.
func TestImageCredentialFlags(t *testing.T) {
	parse := func(args ...string) (*options, error) {
		o := &options{}
		fs := newFlagSet(o)
		if err := fs.Parse(args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		o.flagValues = map[string]string{}
		fs.VisitAll(func(f *flag.Flag) { o.flagValues[f.Name] = f.Value.String() })
		return o, o.validate()
	}
	configz := func(o *options) (policy string, allowlist []string) {
		raw, err := json.Marshal(o.configz())
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Kubelet struct {
				Policy    string   `json:"imagePullCredentialsVerificationPolicy"`
				Allowlist []string `json:"preloadedImagesVerificationAllowlist"`
			} `json:"kubeletconfig"`
		}
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		return got.Kubelet.Policy, got.Kubelet.Allowlist
	}

	o, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	if p, a := configz(o); p != "NeverVerifyPreloadedImages" || a != nil {
		t.Errorf("defaults in /configz: %q %q, want the kubelet's NeverVerifyPreloadedImages and no allowlist", p, a)
	}
	for _, policy := range []string{"NeverVerify", "NeverVerifyPreloadedImages", "AlwaysVerify", "NeverVerifyAllowlistedImages"} {
		if o, err := parse("--image-pull-credentials-verification-policy=" + policy); err != nil {
			t.Errorf("%s: %v", policy, err)
		} else if p, _ := configz(o); p != policy {
			t.Errorf("/configz shows %q for %s", p, policy)
		}
	}
	o, err = parse("--image-pull-credentials-verification-policy=NeverVerifyAllowlistedImages",
		"--preloaded-images-verification-allowlist=docker.io/library/busybox,registry.k8s.io/*",
		"--preloaded-images-verification-allowlist=127.0.0.1:5043/private/busybox")
	if err != nil {
		t.Fatal(err)
	}
	if _, a := configz(o); strings.Join(a, " ") != "docker.io/library/busybox registry.k8s.io/* 127.0.0.1:5043/private/busybox" {
		t.Errorf("/configz allowlist %q", a)
	}

	for _, tc := range []struct {
		args []string
		want []string // in the error
	}{
		{[]string{"--image-pull-credentials-verification-policy=Always"},
			[]string{"--image-pull-credentials-verification-policy", `"Always"`, `"NeverVerify", "NeverVerifyPreloadedImages", "NeverVerifyAllowlistedImages" or "AlwaysVerify"`}},
		{[]string{"--preloaded-images-verification-allowlist=docker.io/library/busybox"},
			[]string{"--preloaded-images-verification-allowlist", "--image-pull-credentials-verification-policy=NeverVerifyAllowlistedImages", "NeverVerifyPreloadedImages"}},
		{[]string{"--image-pull-credentials-verification-policy=NeverVerifyAllowlistedImages", "--preloaded-images-verification-allowlist=busybox"},
			[]string{"--preloaded-images-verification-allowlist", `"busybox"`, "docker.io/library/busybox"}},
		{[]string{"--image-pull-credentials-verification-policy=NeverVerifyAllowlistedImages", "--preloaded-images-verification-allowlist=r.io/*/app"},
			[]string{"--preloaded-images-verification-allowlist", `"r.io/*/app"`, "'/*'"}},
	} {
		_, err := parse(tc.args...)
		if err == nil {
			t.Errorf("%v: accepted", tc.args)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q does not say %s", tc.args, err, w)
			}
		}
	}
}
