package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/podline/podline/pullrecords"
)

// imageCheckOptions are the KubeletConfiguration fields of the check that
// a pod may use an image already on the node (KubeletEnsureSecretPulledImages),
// as flags named after them until podline reads a config file.
type imageCheckOptions struct {
	policy    string
	allowlist listFlag
}

const (
	flagImagePolicy    = "image-pull-credentials-verification-policy"
	flagImageAllowlist = "preloaded-images-verification-allowlist"
)

func addImageCheckFlags(fs *flag.FlagSet, o *imageCheckOptions) {
	fs.StringVar(&o.policy, flagImagePolicy, pullrecords.DefaultPolicy,
		"When a pod may use an image already on the node without pulling it, which has the registry check the pod's pull credentials: "+
			"'NeverVerify' (always), 'NeverVerifyPreloadedImages' (images podline did not pull; podline's own pulls are checked against "+
			"the credentials that pulled them), 'NeverVerifyAllowlistedImages' (only images of --"+flagImageAllowlist+") or 'AlwaysVerify' (never).")
	fs.Var(&o.allowlist, flagImageAllowlist,
		"With --"+flagImagePolicy+"=NeverVerifyAllowlistedImages, the images any pod may use without verification: full names without tag or digest "+
			"(docker.io/library/busybox), or prefixes ending in '/*' (registry.example.com/team/*); comma-separated, repeatable.")
}

// checkPolicy validates both flags as the kubelet validates the fields and
// returns the policy, with errors that name the flag and its value.
func (o *imageCheckOptions) checkPolicy() (*pullrecords.Policy, error) {
	p, err := pullrecords.NewPolicy(o.policy, o.allowlist)
	switch {
	case err == nil:
		return p, nil
	case errors.Is(err, pullrecords.ErrUnknownPolicy):
		return nil, fmt.Errorf("--%s=%q: %w", flagImagePolicy, o.policy, err)
	case errors.Is(err, pullrecords.ErrAllowlistUnused):
		return nil, fmt.Errorf("--%s=%q: may be set only with --%s=%s, not %s", flagImageAllowlist, o.allowlist.String(),
			flagImagePolicy, pullrecords.NeverVerifyAllowlistedImages, o.policy)
	default:
		return nil, fmt.Errorf("--%s: %w", flagImageAllowlist, err)
	}
}
