package pullrecords

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	kubeletv1alpha1 "k8s.io/kubelet/config/v1alpha1"
)

const repo = "r.io/team/app"

func secret(ns, name, uid, hash string) kubeletv1alpha1.ImagePullSecret {
	return kubeletv1alpha1.ImagePullSecret{Namespace: ns, Name: name, UID: uid, CredentialHash: hash}
}

func record(mapping map[string]kubeletv1alpha1.ImagePullCredentials) *kubeletv1alpha1.ImagePulledRecord {
	return &kubeletv1alpha1.ImagePulledRecord{ImageRef: "sha256:abc", CredentialMapping: mapping}
}

func secretsOf(s ...kubeletv1alpha1.ImagePullSecret) map[string]kubeletv1alpha1.ImagePullCredentials {
	return map[string]kubeletv1alpha1.ImagePullCredentials{repo: {KubernetesSecrets: s}}
}

var (
	inA      = secret("a", "pull", "uid-a", "hash-right")
	anywhere = map[string]kubeletv1alpha1.ImagePullCredentials{repo: {NodePodsAccessible: true}}
)

func TestDecide(t *testing.T) {
	mustPolicy := func(name string, allow ...string) *Policy {
		p, err := NewPolicy(name, allow)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	preloaded := mustPolicy(NeverVerifyPreloadedImages)
	f := func(name string, p *Policy, pull v1.PullPolicy, facts Facts, pod []kubeletv1alpha1.ImagePullSecret, want Verdict, wantResult string, wantLearn *kubeletv1alpha1.ImagePullSecret) {
		t.Helper()
		facts.Repository = repo
		asked := false
		d := Decide(p, pull, facts, func() []kubeletv1alpha1.ImagePullSecret { asked = true; return pod })
		if d.Verdict != want || d.Result != wantResult {
			t.Errorf("%s: %s (%s), want %s (%s)", name, d.Verdict, d.Result, want, wantResult)
		}
		switch {
		case wantLearn == nil && d.Learn != nil:
			t.Errorf("%s: learns %+v, want nothing", name, *d.Learn)
		case wantLearn != nil && (d.Learn == nil || *d.Learn != *wantLearn):
			t.Errorf("%s: learns %+v, want %+v", name, d.Learn, *wantLearn)
		}
		if asked && (facts.Record == nil || len(facts.Record.CredentialMapping[repo].KubernetesSecrets) == 0) {
			t.Errorf("%s: read the pod's secrets where no record lists any", name)
		}
	}
	ifNP := v1.PullIfNotPresent

	// What the node agent never pulled, under each policy, named by a
	// tag or digest of its repository.
	preloadedImage := Facts{InRepository: true}
	f("preloaded, default policy", preloaded, ifNP, preloadedImage, nil, Use, ResultPolicyAllowed, nil)
	f("preloaded, NeverVerify", mustPolicy(NeverVerify), ifNP, preloadedImage, nil, Use, ResultPolicyAllowed, nil)
	f("preloaded, AlwaysVerify", mustPolicy(AlwaysVerify), ifNP, preloadedImage, nil, Verify, ResultMustVerify, nil)
	f("preloaded, AlwaysVerify, Never", mustPolicy(AlwaysVerify), v1.PullNever, preloadedImage, nil, Refuse, ResultMustVerify, nil)
	f("preloaded, allowlisted by name", mustPolicy(NeverVerifyAllowlistedImages, repo), ifNP, preloadedImage, nil, Use, ResultPolicyAllowed, nil)
	f("preloaded, allowlisted by prefix", mustPolicy(NeverVerifyAllowlistedImages, "r.io/team/*"), ifNP, preloadedImage, nil, Use, ResultPolicyAllowed, nil)
	f("preloaded, prefix of another segment", mustPolicy(NeverVerifyAllowlistedImages, "r.io/te/*"), ifNP, preloadedImage, nil, Verify, ResultMustVerify, nil)
	f("preloaded, not allowlisted", mustPolicy(NeverVerifyAllowlistedImages, "r.io/team/other"), v1.PullNever, preloadedImage, nil, Refuse, ResultMustVerify, nil)

	// Named by its ID, which the runtime resolves but which is of no
	// repository the image is known under: only NeverVerify exempts it.
	f("preloaded, named by its ID", preloaded, ifNP, Facts{}, nil, Verify, ResultMustVerify, nil)
	f("preloaded, named by its ID, allowlisted name", mustPolicy(NeverVerifyAllowlistedImages, "r.io/team/*"), v1.PullNever, Facts{}, nil, Refuse, ResultMustVerify, nil)
	f("preloaded, named by its ID, NeverVerify", mustPolicy(NeverVerify), ifNP, Facts{}, nil, Use, ResultPolicyAllowed, nil)

	// A pull under way, or cut short by a restart, is not preloading.
	f("pull under way, no record", preloaded, ifNP, Facts{PulledByKubelet: true, InRepository: true}, nil, Verify, ResultMustVerify, nil)
	// The allowlist exempts its images even when pulled with secrets.
	f("pulled with a secret, allowlisted", mustPolicy(NeverVerifyAllowlistedImages, "r.io/*"), ifNP,
		Facts{PulledByKubelet: true, InRepository: true, Record: record(secretsOf(inA))}, nil, Use, ResultPolicyAllowed, nil)
	f("pulled with a secret, NeverVerify", mustPolicy(NeverVerify), ifNP,
		Facts{PulledByKubelet: true, InRepository: true, Record: record(secretsOf(inA))}, nil, Use, ResultPolicyAllowed, nil)

	pulledWith := func(m map[string]kubeletv1alpha1.ImagePullCredentials) Facts {
		return Facts{PulledByKubelet: true, InRepository: true, Record: record(m)}
	}
	// Anonymous pulls serve every pod, under every policy that checks.
	f("pulled anonymously", preloaded, ifNP, pulledWith(anywhere), nil, Use, ResultRecordFound, nil)
	f("pulled anonymously, AlwaysVerify", mustPolicy(AlwaysVerify), v1.PullNever, pulledWith(anywhere), nil, Use, ResultRecordFound, nil)
	// The record is per repository: another name of the same image ID
	// (a retag, a mirror) is verified on its own.
	f("record of another repository", preloaded, ifNP,
		pulledWith(map[string]kubeletv1alpha1.ImagePullCredentials{"r.io/other": {NodePodsAccessible: true}}), nil, Verify, ResultMustVerify, nil)
	f("record without credentials (a pull cut short)", preloaded, ifNP,
		pulledWith(map[string]kubeletv1alpha1.ImagePullCredentials{}), nil, Verify, ResultMustVerify, nil)
	f("record of service accounts only", preloaded, ifNP,
		pulledWith(map[string]kubeletv1alpha1.ImagePullCredentials{repo: {KubernetesServiceAccounts: []kubeletv1alpha1.ImagePullServiceAccount{{Namespace: "a", Name: "sa", UID: "u"}}}}),
		nil, Verify, ResultMustVerify, nil)

	// Pulled with namespace a's secret.
	byA := pulledWith(secretsOf(inA))
	f("the same secret", preloaded, ifNP, byA, []kubeletv1alpha1.ImagePullSecret{inA}, Use, ResultRecordFound, nil)
	f("no secret", preloaded, ifNP, byA, nil, Verify, ResultMustVerify, nil)
	f("no secret, Never", preloaded, v1.PullNever, byA, nil, Refuse, ResultMustVerify, nil)
	wrongInB := secret("b", "pull", "uid-b", "hash-wrong")
	f("a wrong secret", preloaded, ifNP, byA, []kubeletv1alpha1.ImagePullSecret{wrongInB}, Verify, ResultMustVerify, nil)
	rightInB := secret("b", "pull", "uid-b", "hash-right")
	f("the same credential in another secret", preloaded, ifNP, byA,
		[]kubeletv1alpha1.ImagePullSecret{wrongInB, rightInB}, Use, ResultRecordFound, &rightInB)
	rotated := secret("a", "pull", "uid-a", "hash-new")
	f("the same secret, rotated", preloaded, ifNP, byA, []kubeletv1alpha1.ImagePullSecret{rotated}, Use, ResultRecordFound, &rotated)
	recreated := secret("a", "pull", "uid-a2", "hash-new")
	f("a secret of the same name recreated", preloaded, ifNP, byA, []kubeletv1alpha1.ImagePullSecret{recreated}, Verify, ResultMustVerify, nil)
	f("an empty recorded hash matches nothing", preloaded, ifNP, pulledWith(secretsOf(secret("a", "pull", "uid-a", ""))),
		[]kubeletv1alpha1.ImagePullSecret{secret("b", "x", "uid-x", "")}, Verify, ResultMustVerify, nil)

	// A record at the limit still answers for a hash, but learns nothing.
	var many []kubeletv1alpha1.ImagePullSecret
	for i := range learnLimit {
		many = append(many, secret("ns", string(rune('a'+i%26))+string(rune('a'+i/26)), "u", "h"+string(rune(i))))
	}
	many[0].CredentialHash = "hash-right"
	full := pulledWith(secretsOf(many...))
	f("full record, same hash", preloaded, ifNP, full, []kubeletv1alpha1.ImagePullSecret{rightInB}, Use, ResultRecordFound, nil)
	f("full record, same secret with a new hash", preloaded, ifNP, full,
		[]kubeletv1alpha1.ImagePullSecret{secret(many[1].Namespace, many[1].Name, many[1].UID, "hash-new")}, Verify, ResultMustVerify, nil)

	f("unreadable record", mustPolicy(NeverVerify), ifNP, Facts{Unreadable: true}, nil, Verify, ResultError, nil)
	f("unreadable record, Never", preloaded, v1.PullNever, Facts{Unreadable: true}, nil, Refuse, ResultError, nil)
}
