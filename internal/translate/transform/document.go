package transform

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Document names the data key of a ConfigMap (data) or Secret (stringData, or data as
// base64) whose value, a YAML or JSON document, a patch edits. The value is written back in
// the form it was read in: JSON (keys sorted) when it was JSON, YAML otherwise.
type Document struct {
	// Key is the data key.
	Key string `json:"key"`
}

// DocumentFilter runs Edit on the document held in data key Key of each ConfigMap or
// Secret, and writes the result back in the document's form (JSON, keys sorted, or YAML).
// An object that is neither, or lacks the key, is an error naming it.
type DocumentFilter struct {
	// Key is the data key.
	Key string
	// Edit edits the document.
	Edit kio.Filter
}

// Filter implements kio.Filter.
func (d DocumentFilter) Filter(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	return kio.FilterAll(yaml.FilterFunc(func(o *yaml.RNode) (*yaml.RNode, error) {
		field, encoded, err := d.locate(o)
		if err != nil {
			return nil, err
		}
		text := field.YNode().Value
		if encoded {
			raw, err := base64.StdEncoding.DecodeString(text)
			if err != nil {
				return nil, fmt.Errorf("data[%s]: not base64: %w", d.Key, err)
			}
			text = string(raw)
		}
		doc, err := yaml.Parse(text)
		if err != nil {
			return nil, fmt.Errorf("data[%s]: not a YAML or JSON document: %w", d.Key, err)
		}
		out, err := d.Edit.Filter([]*yaml.RNode{doc})
		if err != nil || len(out) != 1 {
			return nil, fmt.Errorf("data[%s]: %w", d.Key, cmpOr(err, errors.New("the patch did not return one document")))
		}
		var written string
		if trimmed := strings.TrimSpace(text); strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[") {
			js, err := out[0].MarshalJSON()
			if err != nil {
				return nil, fmt.Errorf("data[%s]: %w", d.Key, err)
			}
			written = string(js)
		} else if written, err = out[0].String(); err != nil {
			return nil, fmt.Errorf("data[%s]: %w", d.Key, err)
		}
		if encoded {
			written = base64.StdEncoding.EncodeToString([]byte(written))
		}
		if written != field.YNode().Value {
			field.YNode().Value, field.YNode().Style, field.YNode().Tag = written, 0, yaml.NodeTagString
		}
		return o, nil
	})).Filter(objs)
}

// locate returns the scalar node holding the document and whether it is base64 (a
// Secret's data).
func (d DocumentFilter) locate(o *yaml.RNode) (*yaml.RNode, bool, error) {
	kind := o.GetKind()
	var places []string
	switch {
	case kind == "ConfigMap" && o.GetApiVersion() == "v1":
		places = []string{"data"}
	case kind == "Secret" && o.GetApiVersion() == "v1":
		places = []string{"stringData", "data"}
	default:
		return nil, false, fmt.Errorf("document: %s %s is not a ConfigMap or Secret", kind, o.GetName())
	}
	for _, place := range places {
		if v, err := o.Pipe(yaml.Lookup(place, d.Key)); err == nil && v != nil && v.YNode().Kind == yaml.ScalarNode {
			return v, place == "data" && kind == "Secret", nil
		}
	}
	return nil, false, fmt.Errorf("document: %s %s has no data key %q", kind, o.GetName(), d.Key)
}

// cmpOr returns err when it is not nil, else alt.
func cmpOr(err, alt error) error {
	if err != nil {
		return err
	}
	return alt
}
