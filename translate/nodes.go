package translate

import (
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Direct edits of YAML trees, for the engine's hot paths: kyaml's Lookup, SetField and
// SetLabel pipelines allocate a filter chain per call, parse every path segment as a number
// and parse every string they write with a YAML 1.1 parser. These give the same trees for
// well-formed objects (mappings where mappings are expected); the callers leave other objects
// to kyaml.

// lookup is kyaml's Lookup (n.Pipe(yaml.Lookup(path...))) without its filter chain where the
// path is plain mapping keys through mappings.
func lookup(n *yaml.RNode, path ...string) (*yaml.RNode, error) {
	if n != nil {
		if v, ok := lookupNode(n.YNode(), path...); ok {
			if v == nil {
				return nil, nil
			}
			return yaml.NewRNode(v), nil
		}
	}
	return n.Pipe(yaml.Lookup(path...))
}

// lookupNode returns the node at path under n as kyaml's Lookup does: a missing field or a
// null on the way gives nil. ok is false where Lookup does something else: a segment that is
// not a plain key (Lookup reads numbers, "-", "*" and "[k=v]" as list indexes), or a node on
// the way that is neither a mapping nor null (Lookup fails); the caller asks kyaml.
func lookupNode(n *yaml.Node, path ...string) (v *yaml.Node, ok bool) {
	for _, p := range path {
		if !plainKey(p) {
			return nil, false
		}
	}
	for _, p := range path {
		switch {
		case n == nil || n.Tag == yaml.NodeTagNull:
			return nil, true
		case n.Kind != yaml.MappingNode:
			return nil, false
		}
		n = mappingValue(n, p)
	}
	return n, true
}

// plainKey reports whether kyaml's path lookup reads a path segment as a mapping key.
func plainKey(p string) bool {
	return p != "" && strings.TrimSpace(p) == p && !strings.ContainsRune("0123456789+-*[", rune(p[0]))
}

// mappingAt returns the mapping at path under the mapping m, creating the missing ones as
// kyaml's LookupCreate does (untagged, block style, appended). ok is false when a node on the
// path is there but not a mapping (a null included), or a segment is not a plain key: kyaml
// does other things there, and the caller leaves the object to it.
func mappingAt(m *yaml.Node, path ...string) (*yaml.Node, bool) {
	if m.Kind != yaml.MappingNode {
		return nil, false
	}
	for _, p := range path {
		if !plainKey(p) {
			return nil, false // before creating anything: LookupCreate makes lists for indexes
		}
	}
	for _, p := range path {
		v := mappingValue(m, p)
		switch {
		case v == nil:
			v = &yaml.Node{Kind: yaml.MappingNode}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: p}, v)
		case v.Kind != yaml.MappingNode:
			return nil, false
		}
		m = v
	}
	return m, true
}

// setScalar sets key of the mapping m to the scalar v as kyaml's FieldSetter does: an
// existing value is overwritten in place by v in its old style; a new key is appended
// (untagged), with v double-quoted when v is a plain string YAML 1.1 reads as another type.
func setScalar(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			old := m.Content[i+1]
			v.Style = old.Style
			*old = *v
			return
		}
	}
	if yaml.IsYNodeString(v) && v.Style == 0 && nonString(v) {
		v.Style = yaml.DoubleQuotedStyle
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
}

// plainString reports that a YAML 1.1 parser certainly reads s, as a plain scalar, as a
// string: it starts with a letter, holds letters, digits and ". _ / -" only, and is none of
// YAML 1.1's words for booleans and null. (A YAML 1.1 parser reads a plain scalar that starts
// with a letter as a string unless it is one of those words.) It says false for anything else,
// which is then parsed (yaml.IsYaml1_1NonString).
func plainString(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && (c < '0' || c > '9') && c != '.' && c != '_' && c != '/' && c != '-' {
			return false
		}
	}
	switch strings.ToLower(s) {
	case "y", "yes", "n", "no", "true", "false", "on", "off", "null":
		return false
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// nonString is yaml.IsYaml1_1NonString, skipping the parse for strings plainString proves.
func nonString(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && !plainString(n.Value) && yaml.IsYaml1_1NonString(n)
}

// setString sets the string field at path under obj (its parent mappings created as kyaml's
// LookupCreate does) to the scalar v, as obj.SetMapField(v, path...) does.
func setString(obj *yaml.RNode, v *yaml.Node, path ...string) error {
	if obj.IsNil() {
		return obj.SetMapField(yaml.NewRNode(v), path...)
	}
	parent, ok := mappingAt(obj.YNode(), path[:len(path)-1]...)
	if !ok {
		return obj.SetMapField(yaml.NewRNode(v), path...)
	}
	setScalar(parent, path[len(path)-1], v)
	return nil
}

// lookupCreate is kyaml's LookupCreate of a mapping (n.Pipe(yaml.LookupCreate(yaml.MappingNode,
// path...))) without its filter chain where the path is mappings or missing.
func lookupCreate(n *yaml.RNode, path ...string) (*yaml.RNode, error) {
	if !n.IsNil() {
		if m, ok := mappingAt(n.YNode(), path...); ok {
			return yaml.NewRNode(m), nil
		}
	}
	return n.Pipe(yaml.LookupCreate(yaml.MappingNode, path...))
}

// setMetadataString sets metadata.<field>.<key> of obj to value as kyaml's SetAnnotation and
// SetLabel do: the value a single-quoted string, in the old value's style where there is one;
// an annotation first drops an empty annotations mapping, and then an empty metadata. Where
// metadata or the field is there but not a mapping, kyaml's filter f does it.
func setMetadataString(obj *yaml.RNode, field, key, value string) error {
	root := obj.YNode()
	meta := mappingValue(root, "metadata")
	var m *yaml.Node
	if meta != nil {
		m = mappingValue(meta, field)
	}
	if root.Kind != yaml.MappingNode || (meta != nil && meta.Kind != yaml.MappingNode) || (m != nil && m.Kind != yaml.MappingNode) {
		if field == yaml.AnnotationsField {
			return obj.PipeE(yaml.SetAnnotation(key, value))
		}
		return obj.PipeE(yaml.SetLabel(key, value))
	}
	if field == yaml.AnnotationsField {
		if m != nil && len(m.Content) == 0 {
			removeField(meta, field)
		}
		if meta != nil && len(meta.Content) == 0 {
			removeField(root, "metadata")
		}
	}
	m, _ = mappingAt(root, "metadata", field)
	v := yaml.NewStringRNode(value).YNode()
	v.Style = yaml.SingleQuotedStyle
	setScalar(m, key, v)
	return nil
}
