package stages

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestMatchesNodeAffinity(t *testing.T) {
	labels := map[string]string{"disk": "ssd", "zone": "a", "cores": "16", "gen": "v2"}
	f := func(name string, want bool, mutate func(*v1.Pod)) {
		t.Helper()
		if got := matchesNodeAffinity(unitPod(mutate), "node-a", labels); got != want {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	required := func(terms ...v1.NodeSelectorTerm) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms},
			}}
		}
	}
	expr := func(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorTerm {
		return v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
	}
	field := func(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorTerm {
		return v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}
	}
	and := func(terms ...v1.NodeSelectorTerm) v1.NodeSelectorTerm {
		var out v1.NodeSelectorTerm
		for _, t := range terms {
			out.MatchExpressions = append(out.MatchExpressions, t.MatchExpressions...)
			out.MatchFields = append(out.MatchFields, t.MatchFields...)
		}
		return out
	}
	sel := func(m map[string]string) func(*v1.Pod) { return func(p *v1.Pod) { p.Spec.NodeSelector = m } }
	both := func(a, b func(*v1.Pod)) func(*v1.Pod) { return func(p *v1.Pod) { a(p); b(p) } }

	f("nothing asked", true, nil)
	f("selector matches", true, sel(map[string]string{"disk": "ssd", "zone": "a"}))
	f("selector value differs", false, sel(map[string]string{"disk": "hdd"}))
	f("selector label missing", false, sel(map[string]string{"gpu": "true"}))
	f("selector for an empty value needs the label", false, sel(map[string]string{"gpu": ""}))
	f("preferred terms never refuse", true, func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: 1, Preference: expr("disk", v1.NodeSelectorOpIn, "hdd")}},
		}}
	})

	f("In", true, required(expr("zone", v1.NodeSelectorOpIn, "b", "a")))
	f("In, no value matches", false, required(expr("zone", v1.NodeSelectorOpIn, "b", "c")))
	f("In, label missing", false, required(expr("rack", v1.NodeSelectorOpIn, "1")))
	f("NotIn", true, required(expr("zone", v1.NodeSelectorOpNotIn, "b")))
	f("NotIn, value listed", false, required(expr("zone", v1.NodeSelectorOpNotIn, "a")))
	f("NotIn, label missing", true, required(expr("rack", v1.NodeSelectorOpNotIn, "1")))
	f("Exists", true, required(expr("disk", v1.NodeSelectorOpExists)))
	f("Exists, missing", false, required(expr("rack", v1.NodeSelectorOpExists)))
	f("DoesNotExist", true, required(expr("rack", v1.NodeSelectorOpDoesNotExist)))
	f("DoesNotExist, present", false, required(expr("disk", v1.NodeSelectorOpDoesNotExist)))
	f("Gt", true, required(expr("cores", v1.NodeSelectorOpGt, "8")))
	f("Gt, equal", false, required(expr("cores", v1.NodeSelectorOpGt, "16")))
	f("Lt", true, required(expr("cores", v1.NodeSelectorOpLt, "32")))
	f("Lt, label not a number", false, required(expr("gen", v1.NodeSelectorOpLt, "3")))
	f("Gt, label missing", false, required(expr("rack", v1.NodeSelectorOpGt, "0")))

	f("expressions of a term are ANDed", false, required(and(expr("zone", v1.NodeSelectorOpIn, "a"), expr("disk", v1.NodeSelectorOpIn, "hdd"))))
	f("terms are ORed", true, required(expr("disk", v1.NodeSelectorOpIn, "hdd"), expr("zone", v1.NodeSelectorOpIn, "a")))
	f("no terms match no node", false, required())
	f("an empty term matches no node", false, required(v1.NodeSelectorTerm{}))
	f("an empty term is skipped, not failed", true, required(v1.NodeSelectorTerm{}, expr("zone", v1.NodeSelectorOpIn, "a")))
	f("selector and affinity must both match", false, both(sel(map[string]string{"disk": "hdd"}), required(expr("zone", v1.NodeSelectorOpIn, "a"))))

	f("field metadata.name In", true, required(field("metadata.name", v1.NodeSelectorOpIn, "node-a")))
	f("field metadata.name In, other node", false, required(field("metadata.name", v1.NodeSelectorOpIn, "node-b")))
	f("field metadata.name NotIn", true, required(field("metadata.name", v1.NodeSelectorOpNotIn, "node-b")))
	f("field and expression of a term are ANDed", false, required(and(field("metadata.name", v1.NodeSelectorOpIn, "node-a"), expr("zone", v1.NodeSelectorOpIn, "b"))))
	f("an unknown field reads empty", true, required(field("spec.unschedulable", v1.NodeSelectorOpNotIn, "true")))

	// Malformed terms match nothing, even where a part would match.
	f("In without values", false, required(expr("zone", v1.NodeSelectorOpIn)))
	f("NotIn without values", false, required(expr("rack", v1.NodeSelectorOpNotIn)))
	f("Exists with values", false, required(expr("disk", v1.NodeSelectorOpExists, "ssd")))
	f("Gt with two values", false, required(expr("cores", v1.NodeSelectorOpGt, "1", "2")))
	f("Gt with a word", false, required(expr("cores", v1.NodeSelectorOpGt, "many")))
	f("unknown operator", false, required(expr("zone", "Equals", "a")))
	f("bad key", false, required(expr("bad key", v1.NodeSelectorOpDoesNotExist)))
	f("bad value", false, required(expr("zone", v1.NodeSelectorOpNotIn, "not a value!")))
	f("a malformed requirement fails its whole term", false, required(and(expr("zone", v1.NodeSelectorOpIn, "a"), expr("disk", v1.NodeSelectorOpExists, "x"))))
	f("a malformed term leaves the others", true, required(expr("zone", v1.NodeSelectorOpIn), expr("zone", v1.NodeSelectorOpIn, "a")))
	f("field with two values", false, required(field("metadata.name", v1.NodeSelectorOpIn, "node-a", "node-b")))
	f("field with Exists", false, required(field("metadata.name", v1.NodeSelectorOpExists)))
}

func TestOSRejection(t *testing.T) {
	f := func(name, reason string, mutate func(*v1.Pod)) {
		t.Helper()
		got := ""
		if rej := osRejection(unitPod(mutate)); rej != nil {
			got = rej.Reason
		}
		if got != reason {
			t.Errorf("%s: %q, want %q", name, got, reason)
		}
	}
	f("no os asked", "", nil)
	f("linux label", "", func(p *v1.Pod) { p.Labels = map[string]string{"kubernetes.io/os": "linux"} })
	f("windows label", "PodOSSelectorNodeLabelDoesNotMatch", func(p *v1.Pod) { p.Labels = map[string]string{"kubernetes.io/os": "windows"} })
	f("empty label", "PodOSSelectorNodeLabelDoesNotMatch", func(p *v1.Pod) { p.Labels = map[string]string{"kubernetes.io/os": ""} })
	f("a nodeSelector is the affinity check's", "", func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "windows"} })
	f("linux os field", "", func(p *v1.Pod) { p.Spec.OS = &v1.PodOS{Name: v1.Linux} })
	f("windows os field", "PodOSNotSupported", func(p *v1.Pod) { p.Spec.OS = &v1.PodOS{Name: v1.Windows} })
	f("the label goes first", "PodOSSelectorNodeLabelDoesNotMatch", func(p *v1.Pod) {
		p.Labels = map[string]string{"kubernetes.io/os": "windows"}
		p.Spec.OS = &v1.PodOS{Name: v1.Windows}
	})
}
