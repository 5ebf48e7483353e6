package node

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ParseTaints reads --register-with-taints: "key=value:Effect,key2:Effect".
// The effect is required, the value optional; a key may appear once per
// effect. The taints go on the Node only when podline creates it: a node may
// not change its own taints afterwards.
func ParseTaints(s string) ([]v1.Taint, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []v1.Taint
	seen := map[[2]string]bool{}
	for _, spec := range strings.Split(s, ",") {
		t, err := parseTaint(strings.TrimSpace(spec))
		if err != nil {
			return nil, fmt.Errorf("taint %q: %w", spec, err)
		}
		id := [2]string{t.Key, string(t.Effect)}
		if seen[id] {
			return nil, fmt.Errorf("taint %q: key %s appears twice with effect %s", spec, t.Key, t.Effect)
		}
		seen[id] = true
		out = append(out, t)
	}
	return out, nil
}

func parseTaint(spec string) (v1.Taint, error) {
	if strings.HasSuffix(spec, "-") {
		return v1.Taint{}, fmt.Errorf("removing a taint (trailing -) means nothing at registration")
	}
	kv, effect, ok := strings.Cut(spec, ":")
	if !ok {
		return v1.Taint{}, fmt.Errorf("want key[=value]:effect")
	}
	switch e := v1.TaintEffect(effect); e {
	case v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute:
	default:
		return v1.Taint{}, fmt.Errorf("effect %q: want NoSchedule, PreferNoSchedule or NoExecute", effect)
	}
	key, value, _ := strings.Cut(kv, "=")
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return v1.Taint{}, fmt.Errorf("bad key %q: %s", key, strings.Join(errs, "; "))
	}
	if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
		return v1.Taint{}, fmt.Errorf("bad value %q: %s", value, strings.Join(errs, "; "))
	}
	return v1.Taint{Key: key, Value: value, Effect: v1.TaintEffect(effect)}, nil
}
