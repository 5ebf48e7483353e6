package node

import (
	"maps"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestParseLabels(t *testing.T) {
	f := func(in string, want map[string]string, wantErr string) {
		t.Helper()
		got, err := ParseLabels(in)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Fatalf("%q: err %v, want %q", in, err, wantErr)
			}
			return
		}
		if err != nil || !maps.Equal(got, want) {
			t.Fatalf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	f("", map[string]string{}, "")
	f("a=b,example.com/c=d", map[string]string{"a": "b", "example.com/c": "d"}, "")
	f(" a = b ,,flag", map[string]string{"a": "b", "flag": ""}, "")
	// The labels a node may set on itself.
	f("kubernetes.io/hostname=h,topology.kubernetes.io/zone=z1", map[string]string{"kubernetes.io/hostname": "h", "topology.kubernetes.io/zone": "z1"}, "")
	f("node.kubernetes.io/pool=p,kubelet.kubernetes.io/x=y,team.node.kubernetes.io/t=u",
		map[string]string{"node.kubernetes.io/pool": "p", "kubelet.kubernetes.io/x": "y", "team.node.kubernetes.io/t": "u"}, "")
	// The ones NodeRestriction refuses.
	f("node-role.kubernetes.io/worker=", nil, `may not set node-role.kubernetes.io/worker`)
	f("a=b,kubernetes.io/role=x", nil, "may not set kubernetes.io/role")
	f("foo.k8s.io/x=y", nil, "may not set foo.k8s.io/x")
	f("node-restriction.kubernetes.io/x=y", nil, "may not set")
	f("bad key=x", nil, `label "bad key=x": bad key`)
	f("a=not a value", nil, "bad value")
	f("a="+strings.Repeat("v", 64), nil, "bad value")
}

func TestParseTaints(t *testing.T) {
	f := func(in string, want []v1.Taint, wantErr string) {
		t.Helper()
		got, err := ParseTaints(in)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Fatalf("%q: err %v, want %q", in, err, wantErr)
			}
			return
		}
		if err != nil || len(got) != len(want) {
			t.Fatalf("%q: %v, %v; want %v", in, got, err, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%q: taint %d is %+v, want %+v", in, i, got[i], want[i])
			}
		}
	}
	f("", nil, "")
	f("dedicated=gpu:NoSchedule,example.com/drain:NoExecute", []v1.Taint{
		{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule},
		{Key: "example.com/drain", Effect: v1.TaintEffectNoExecute},
	}, "")
	f("a:NoSchedule,a:PreferNoSchedule", []v1.Taint{
		{Key: "a", Effect: v1.TaintEffectNoSchedule}, {Key: "a", Effect: v1.TaintEffectPreferNoSchedule},
	}, "")
	f("a=b", nil, "want key[=value]:effect")
	f("a=b:Sometimes", nil, `effect "Sometimes"`)
	f("a:NoSchedule,a=other:NoSchedule", nil, "appears twice")
	f("a:NoSchedule-", nil, "trailing -")
	f("bad key:NoSchedule", nil, "bad key")
	f("a=b=c:NoSchedule", nil, "bad value")
	f(":NoSchedule", nil, "bad key")
}
