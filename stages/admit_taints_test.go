package stages

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestUntoleratedTaint(t *testing.T) {
	noExec := v1.Taint{Key: "node.kubernetes.io/unreachable", Effect: v1.TaintEffectNoExecute}
	dedicated := v1.Taint{Key: "dedicated", Value: "db", Effect: v1.TaintEffectNoExecute}
	noSched := v1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: v1.TaintEffectNoSchedule}
	prefer := v1.Taint{Key: "spot", Effect: v1.TaintEffectPreferNoSchedule}
	f := func(name string, taints []v1.Taint, tolerations []v1.Toleration, source string, want string) {
		t.Helper()
		pod := unitPod(func(p *v1.Pod) {
			p.Spec.Tolerations = tolerations
			if source != "" {
				p.Annotations = map[string]string{"kubernetes.io/config.source": source}
			}
		})
		got := ""
		if taint, barred := untoleratedTaint(pod, taints); barred {
			got = taint.Key
		}
		if got != want {
			t.Errorf("%s: barred by %q, want %q", name, got, want)
		}
	}
	tol := func(key string, op v1.TolerationOperator, value string, effect v1.TaintEffect) v1.Toleration {
		return v1.Toleration{Key: key, Operator: op, Value: value, Effect: effect}
	}
	f("no taints", nil, nil, "", "")
	f("NoSchedule and PreferNoSchedule do not bar", []v1.Taint{noSched, prefer}, nil, "", "")
	f("NoExecute bars", []v1.Taint{noSched, dedicated}, nil, "", "dedicated")
	f("the first untolerated one", []v1.Taint{dedicated, noExec}, []v1.Toleration{tol("dedicated", "", "db", "")}, "", noExec.Key)
	f("Equal, same value", []v1.Taint{dedicated}, []v1.Toleration{tol("dedicated", v1.TolerationOpEqual, "db", v1.TaintEffectNoExecute)}, "", "")
	f("Equal, other value", []v1.Taint{dedicated}, []v1.Toleration{tol("dedicated", v1.TolerationOpEqual, "web", "")}, "", "dedicated")
	f("no operator is Equal", []v1.Taint{dedicated}, []v1.Toleration{tol("dedicated", "", "db", "")}, "", "")
	f("Exists, any value", []v1.Taint{dedicated}, []v1.Toleration{tol("dedicated", v1.TolerationOpExists, "", "")}, "", "")
	f("Exists with no key tolerates everything", []v1.Taint{dedicated, noExec}, []v1.Toleration{tol("", v1.TolerationOpExists, "", "")}, "", "")
	f("another effect", []v1.Taint{dedicated}, []v1.Toleration{tol("dedicated", v1.TolerationOpExists, "", v1.TaintEffectNoSchedule)}, "", "dedicated")
	f("another key", []v1.Taint{dedicated}, []v1.Toleration{tol("other", v1.TolerationOpExists, "", "")}, "", "dedicated")
	f("Gt is off, as in the kubelet", []v1.Taint{{Key: "level", Value: "5", Effect: v1.TaintEffectNoExecute}},
		[]v1.Toleration{tol("level", v1.TolerationOpGt, "3", "")}, "", "level")
	f("unknown operator", []v1.Taint{dedicated}, []v1.Toleration{tol("dedicated", "Matches", "db", "")}, "", "dedicated")
	f("static pods from a file are never barred", []v1.Taint{dedicated}, nil, "file", "")
	f("nor from a URL", []v1.Taint{dedicated}, nil, "http", "")
	f("API pods are", []v1.Taint{dedicated}, nil, "api", "dedicated")
}
