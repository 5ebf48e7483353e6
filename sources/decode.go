package sources

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Decode reads pods from a manifest: YAML or JSON holding one Pod, a PodList
// or a v1 List of Pods; YAML may hold several such documents separated by
// "---". Decoding is strict and case-sensitive: an unknown or duplicated
// field is an error naming its path (unknown field "spec.containers[0].imag").
// Empty documents are skipped, so empty data gives no pods and no error.
// The pods are not defaulted or validated, and their TypeMeta is cleared.
func Decode(data []byte) ([]*v1.Pod, error) {
	docs, err := splitDocuments(data)
	if err != nil {
		return nil, err
	}
	var pods []*v1.Pod
	for i, doc := range docs {
		ps, err := decodeDocument(doc)
		if err != nil {
			if len(docs) > 1 {
				return nil, newClassError(ErrDecode, fmt.Sprintf("document %d: %v", i+1, err), err)
			}
			return nil, err
		}
		pods = append(pods, ps...)
		if len(pods) > maxManifestPods {
			return nil, tooManyPods()
		}
	}
	for _, p := range pods {
		p.TypeMeta = metav1.TypeMeta{}
	}
	return pods, nil
}

func splitDocuments(data []byte) ([][]byte, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, newClassError(ErrDecode, err.Error(), err)
		}
		docs = append(docs, doc)
	}
}

func decodeDocument(doc []byte) ([]*v1.Pod, error) {
	js := bytes.TrimSpace(doc)
	if !json.Valid(js) {
		var err error
		// Strict conversion: a key given twice in YAML is an error, not a
		// silent last-one-wins. JSON skips the conversion (and duplicate
		// keys there are caught by decodeStrict).
		if js, err = yaml.YAMLToJSONStrict(doc); err != nil {
			// YAML errors span lines; a log line should not.
			return nil, newClassError(ErrDecode, strings.Join(strings.Fields(err.Error()), " "), err)
		}
	}
	if len(js) == 0 || string(js) == "null" {
		return nil, nil
	}
	var tm metav1.TypeMeta
	if err := kjson.UnmarshalCaseSensitivePreserveInts(js, &tm); err != nil {
		return nil, newClassError(ErrDecode, "want an object with apiVersion and kind: "+err.Error(), err)
	}
	if err := checkTypeMeta(tm, "", "Pod", "PodList", "List"); err != nil {
		return nil, err
	}
	switch tm.Kind {
	case "Pod":
		pod := new(v1.Pod)
		if err := decodeStrict(js, pod, ""); err != nil {
			return nil, err
		}
		return []*v1.Pod{pod}, nil
	case "PodList":
		return decodePodList(js)
	default:
		return decodeList(js)
	}
}

// tooManyPods is the error of a manifest past maxManifestPods.
func tooManyPods() error {
	return newClassError(ErrDecode, fmt.Sprintf("items: more than %d pods in one manifest: split it", maxManifestPods), nil)
}

// countItems counts a list's items without decoding them, for a cost of
// the order of the list's bytes.
func countItems(js []byte) (int, error) {
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(js, &list); err != nil {
		return 0, newClassError(ErrDecode, err.Error(), err)
	}
	return len(list.Items), nil
}

func decodePodList(js []byte) ([]*v1.Pod, error) {
	if n, err := countItems(js); err != nil {
		return nil, err
	} else if n > maxManifestPods {
		return nil, tooManyPods()
	}
	var list v1.PodList
	if err := decodeStrict(js, &list, ""); err != nil {
		return nil, err
	}
	pods := make([]*v1.Pod, len(list.Items))
	for i := range list.Items {
		p := &list.Items[i]
		// Items of a PodList usually omit their type; a stated one must fit.
		if (p.Kind != "" && p.Kind != "Pod") || (p.APIVersion != "" && p.APIVersion != "v1") {
			return nil, newClassError(ErrDecode, fmt.Sprintf("items[%d]: want apiVersion v1, kind Pod, got %q %q", i, p.APIVersion, p.Kind), nil)
		}
		pods[i] = p
	}
	return pods, nil
}

// decodeList reads a generic v1 List, whose items must each say they are
// v1 Pods.
func decodeList(js []byte) ([]*v1.Pod, error) {
	if n, err := countItems(js); err != nil {
		return nil, err
	} else if n > maxManifestPods {
		return nil, tooManyPods()
	}
	var list struct {
		metav1.TypeMeta `json:",inline"`
		metav1.ListMeta `json:"metadata,omitempty"`
		Items           []json.RawMessage `json:"items"`
	}
	if err := decodeStrict(js, &list, ""); err != nil {
		return nil, err
	}
	pods := make([]*v1.Pod, len(list.Items))
	for i, item := range list.Items {
		prefix := fmt.Sprintf("items[%d]", i)
		var tm metav1.TypeMeta
		if err := kjson.UnmarshalCaseSensitivePreserveInts(item, &tm); err != nil {
			return nil, newClassError(ErrDecode, prefix+": "+err.Error(), err)
		}
		if err := checkTypeMeta(tm, prefix+".", "Pod"); err != nil {
			return nil, err
		}
		pods[i] = new(v1.Pod)
		if err := decodeStrict(item, pods[i], prefix+"."); err != nil {
			return nil, err
		}
	}
	return pods, nil
}

func checkTypeMeta(tm metav1.TypeMeta, prefix string, kinds ...string) error {
	switch {
	case tm.APIVersion == "":
		return newClassError(ErrDecode, prefix+"apiVersion: Required value: want v1", nil)
	case tm.APIVersion != "v1":
		return newClassError(ErrDecode, fmt.Sprintf("%sapiVersion: Unsupported value: %q: want v1", prefix, tm.APIVersion), nil)
	case tm.Kind == "":
		return newClassError(ErrDecode, prefix+"kind: Required value: want one of "+strings.Join(kinds, ", "), nil)
	}
	for _, k := range kinds {
		if tm.Kind == k {
			return nil
		}
	}
	return newClassError(ErrDecode, fmt.Sprintf("%skind: Unsupported value: %q: want one of %s", prefix, tm.Kind, strings.Join(kinds, ", ")), nil)
}

// decodeStrict decodes js into v and fails on unknown or duplicate fields,
// naming every one with its full path.
func decodeStrict(js []byte, v any, prefix string) error {
	strict, err := kjson.UnmarshalStrict(js, v)
	if err != nil {
		msg := err.Error()
		if prefix != "" {
			msg = strings.TrimSuffix(prefix, ".") + ": " + msg
		}
		return newClassError(ErrDecode, msg, err)
	}
	if len(strict) == 0 {
		return nil
	}
	msgs := make([]string, len(strict))
	for i, e := range strict {
		var fe kjson.FieldError
		if prefix != "" && errors.As(e, &fe) {
			fe.SetFieldPath(prefix + fe.FieldPath())
		}
		msgs[i] = e.Error()
	}
	return newClassError(ErrDecode, strings.Join(msgs, "; "), errors.Join(strict...))
}
