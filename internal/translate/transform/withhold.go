package transform

import (
	"encoding/json"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/yamlnode"
)

// AnnotationWithheld records, on an object a Withhold filter changed, the labels and
// annotations it kept from the target cluster, as JSON
// {"labels":{key:value},"annotations":{key:value}}. The inverse puts them back, so the
// operator reads its object as it wrote it, and a component of topolayer that plays the
// part of the controller a key asked for reads the request there (Withheld).
const AnnotationWithheld = "topolayer.dev/withheld"

// Withhold removes the labels and annotations of the given keys from an object's metadata
// and records their values under AnnotationWithheld: keys that ask a controller of the
// cluster the object lands on to act for it (inject a CA bundle, sign a serving
// certificate), where that controller is not the one the operator meant. A record the
// object already carries is replaced by what the filter withholds: only topolayer writes it.
type Withhold struct {
	// Labels and Annotations are the keys withheld.
	Labels, Annotations []string
}

// Withheld returns the labels and annotations a Withhold filter kept from an object with
// these annotations; false when it kept none or the record does not parse.
func Withheld(annotations map[string]string) (labels, kept map[string]string, ok bool) {
	text, found := annotations[AnnotationWithheld]
	if !found {
		return nil, nil, false
	}
	var r withheld
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return nil, nil, false
	}
	return r.Labels, r.Annotations, len(r.Labels)+len(r.Annotations) > 0
}

// withheld is the JSON of AnnotationWithheld.
type withheld struct {
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Applies reports whether the filter changes obj: it carries one of the keys, or a record.
func (w Withhold) Applies(obj *yaml.RNode) bool {
	meta := yamlnode.MappingValue(obj.YNode(), "metadata")
	if meta == nil || meta.Kind != yaml.MappingNode {
		return false
	}
	has := func(field string, keys []string) bool {
		m := yamlnode.MappingValue(meta, field)
		return m != nil && m.Kind == yaml.MappingNode && slices.ContainsFunc(keys, func(k string) bool { return yamlnode.HasKey(m, k) })
	}
	return has("labels", w.Labels) || has("annotations", w.Annotations) || has("annotations", []string{AnnotationWithheld})
}

// Scope implements Scoped: the filter changes metadata's labels and annotations only.
func (w Withhold) Scope(obj *yaml.Node) ([]string, []string, func(), bool) {
	meta := yamlnode.MappingValue(obj, "metadata")
	if meta == nil || meta.Kind != yaml.MappingNode {
		return nil, nil, nil, false
	}
	return []string{"metadata"}, []string{"labels", "annotations"}, func() { w.edit(meta) }, true
}

// Filter implements kio.Filter.
func (w Withhold) Filter(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	return kio.FilterAll(yaml.FilterFunc(func(o *yaml.RNode) (*yaml.RNode, error) {
		if meta := yamlnode.MappingValue(o.YNode(), "metadata"); meta != nil && meta.Kind == yaml.MappingNode {
			w.edit(meta)
		}
		return o, nil
	})).Filter(objs)
}

// edit withholds the keys from the metadata mapping meta and writes the record; a mapping
// left empty goes.
func (w Withhold) edit(meta *yaml.Node) {
	var r withheld
	r.Labels = take(meta, "labels", w.Labels)
	r.Annotations = take(meta, "annotations", w.Annotations)
	annotations := yamlnode.MappingValue(meta, "annotations")
	if annotations != nil && annotations.Kind == yaml.MappingNode {
		yamlnode.RemoveField(annotations, AnnotationWithheld)
	}
	if len(r.Labels)+len(r.Annotations) > 0 {
		if annotations == nil || annotations.Kind != yaml.MappingNode {
			annotations = yamlnode.SetField(meta, "annotations", &yaml.Node{Kind: yaml.MappingNode}, "")
		}
		text, _ := json.Marshal(r) // maps of strings: always marshals, keys sorted
		yamlnode.SetScalar(annotations, AnnotationWithheld, yaml.NewStringRNode(string(text)).YNode())
	}
	for _, field := range []string{"labels", "annotations"} {
		if m := yamlnode.MappingValue(meta, field); m != nil && m.Kind == yaml.MappingNode && len(m.Content) == 0 {
			yamlnode.RemoveField(meta, field)
		}
	}
}

// take removes keys from the mapping field of meta and returns the string values it held
// (a null value, which would remove the key on the cluster, is removed unrecorded).
func take(meta *yaml.Node, field string, keys []string) map[string]string {
	m := yamlnode.MappingValue(meta, field)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var out map[string]string
	for _, k := range keys {
		v := yamlnode.MappingValue(m, k)
		if v == nil {
			continue
		}
		if v.Kind == yaml.ScalarNode && !yamlnode.IsNull(v) {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v.Value
		}
		yamlnode.RemoveField(m, k)
	}
	return out
}
