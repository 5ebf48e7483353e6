package sources

import (
	"errors"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	f := func(name, data string, want ...string) {
		t.Helper()
		pods, err := Decode([]byte(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got []string
		for _, p := range pods {
			if p.Kind != "" || p.APIVersion != "" {
				t.Errorf("%s: TypeMeta not cleared: %+v", name, p.TypeMeta)
			}
			got = append(got, p.Name+"="+p.Spec.Containers[0].Image)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	f("yaml pod", podYAML("a", "busybox"), "a=busybox")
	f("json pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"j"},"spec":{"containers":[{"name":"c","image":"img:1"}]}}`, "j=img:1")
	f("yaml flow style", `{apiVersion: v1, kind: Pod, metadata: {name: f}, spec: {containers: [{name: c, image: x}]}}`, "f=x")
	f("pod list", `apiVersion: v1
kind: PodList
items:
- metadata: {name: one}
  spec: {containers: [{name: c, image: i1}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: two}
  spec: {containers: [{name: c, image: i2}]}
`, "one=i1", "two=i2")
	f("json list", `{"apiVersion":"v1","kind":"List","items":[
		{"apiVersion":"v1","kind":"Pod","metadata":{"name":"l1"},"spec":{"containers":[{"name":"c","image":"i"}]}},
		{"apiVersion":"v1","kind":"Pod","metadata":{"name":"l2"},"spec":{"containers":[{"name":"c","image":"j"}]}}]}`, "l1=i", "l2=j")
	f("multi document", "---\n"+podYAML("m1", "a")+"---\n# only a comment\n---\n"+podYAML("m2", "b")+"--- # trailing\n", "m1=a", "m2=b")
	f("empty", "")
	f("only comments", "# nothing here\n")
}

func TestDecodeErrors(t *testing.T) {
	f := func(name, data, want string) {
		t.Helper()
		_, err := Decode([]byte(data))
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		if !errors.Is(err, ErrDecode) {
			t.Errorf("%s: %v is not ErrDecode", name, err)
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %q does not contain %q", name, err, want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %q spans lines", name, err)
		}
	}
	f("unknown field", strings.Replace(podYAML("a", "b"), "image:", "imagee:", 1), `unknown field "spec.containers[0].imagee"`)
	f("field names are case-sensitive", strings.Replace(podYAML("a", "b"), "image:", "Image:", 1), `unknown field "spec.containers[0].Image"`)
	f("unknown top-level field", podYAML("a", "b")+"extra: 1\n", `unknown field "extra"`)
	f("unknown field in list item", `{"apiVersion":"v1","kind":"List","items":[
		{"apiVersion":"v1","kind":"Pod","metadata":{"name":"ok"},"spec":{"containers":[{"name":"c","image":"i"}]}},
		{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bad"},"spec":{"bogus":true}}]}`, `unknown field "items[1].spec.bogus"`)
	f("unknown field in pod list item", "apiVersion: v1\nkind: PodList\nitems:\n- metadata: {name: a, colour: red}\n", `unknown field "items[0].metadata.colour"`)
	f("duplicate yaml key", "apiVersion: v1\nkind: Pod\nkind: Pod\n", `"kind" already set`)
	f("duplicate json key", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","name":"b"}}`, `duplicate field "metadata.name"`)
	f("wrong api version", "apiVersion: apps/v1\nkind: Pod\n", `apiVersion: Unsupported value: "apps/v1"`)
	f("missing api version", "kind: Pod\n", "apiVersion: Required value")
	f("missing kind", "apiVersion: v1\nmetadata: {name: a}\n", "kind: Required value")
	f("wrong kind", "apiVersion: v1\nkind: Deployment\n", `kind: Unsupported value: "Deployment"`)
	f("list of services", `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Service"}]}`, `items[0].kind: Unsupported value: "Service"`)
	f("pod list item of another kind", "apiVersion: v1\nkind: PodList\nitems:\n- kind: Node\n", `items[0]: want apiVersion v1, kind Pod`)
	f("wrong type", "apiVersion: v1\nkind: Pod\nspec: {containers: yes}\n", "cannot unmarshal")
	f("not an object", "- a\n- b\n", "want an object")
	f("bad yaml", "apiVersion: v1\nkind: Pod\n  metadata: [\n", "yaml")
	f("second document is bad", podYAML("a", "b")+"---\napiVersion: v1\nkind: Pod\nspec: {nope: 1}\n", `document 2: unknown field "spec.nope"`)
}
