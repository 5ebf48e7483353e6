package podspec

import "k8s.io/apimachinery/pkg/util/validation"

// CheckEnvVarName returns why name cannot be an environment variable, or
// nothing. It is the API server's relaxed rule (any printable ASCII but
// '=', not only C identifiers): validation applies it to declared names,
// and envFrom imports every configMap or secret key that passes it, so a
// key such as "1st.key" arrives as it would under the kubelet.
func CheckEnvVarName(name string) []string {
	return validation.IsRelaxedEnvVarName(name)
}
