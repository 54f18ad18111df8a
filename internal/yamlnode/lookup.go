package yamlnode

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/yamltag"
)

// MappingKeys finds the values of a mapping's keys: by scanning a small mapping, through an
// index of a large one.
type MappingKeys struct {
	m     *yaml.Node
	index map[string]*yaml.Node
}

// SmallMapping is the most keys a mapping has for mappingKeys to scan it.
const SmallMapping = 16

// KeysOf returns the key finder of mapping m (nil for none).
func KeysOf(m *yaml.Node) MappingKeys {
	k := MappingKeys{m: m}
	if m != nil && len(m.Content) > 2*SmallMapping {
		k.index = make(map[string]*yaml.Node, len(m.Content)/2)
		for i := 0; i+1 < len(m.Content); i += 2 {
			k.index[m.Content[i].Value] = m.Content[i+1]
		}
	}
	return k
}

// value returns the value of key (the last, with duplicate keys, as an index holds it); nil
// for none.
func (k MappingKeys) Value(key string) *yaml.Node {
	if k.index != nil {
		return k.index[key]
	}
	return MappingValueIn(k.m, key)
}

// Has reports whether the mapping has key.
func (k MappingKeys) Has(key string) bool {
	if k.index != nil {
		_, ok := k.index[key]
		return ok
	}
	return k.m != nil && HasKey(k.m, key)
}

// MappingValueIn returns the value of key in the mapping m (nil for none, or a nil m); with
// duplicate keys, the last, as a map of the keys would.
func MappingValueIn(m *yaml.Node, key string) *yaml.Node {
	if m == nil {
		return nil
	}
	var v *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v = m.Content[i+1]
		}
	}
	return v
}

// HasKey reports whether mapping m has key.
func HasKey(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

// Deref follows aliases and documents; a null scalar is nil.
func Deref(n *yaml.Node) *yaml.Node {
	for n != nil && (n.Kind == yaml.AliasNode || n.Kind == yaml.DocumentNode) {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) == 1 {
			n = n.Content[0]
		} else {
			return nil
		}
	}
	if n != nil && n.Kind == yaml.ScalarNode && yamltag.Of(n) == yaml.NodeTagNull {
		return nil
	}
	return n
}

// Lookup is kyaml's Lookup (n.Pipe(yaml.Lookup(path...))) without its filter chain where the
// path is plain mapping keys through mappings.
func Lookup(n *yaml.RNode, path ...string) (*yaml.RNode, error) {
	if n != nil {
		if v, ok := LookupNode(n.YNode(), path...); ok {
			if v == nil {
				return nil, nil
			}
			return yaml.NewRNode(v), nil
		}
	}
	return n.Pipe(yaml.Lookup(path...))
}

// LookupNode returns the node at path under n as kyaml's Lookup does: a missing field or a
// null on the way gives nil. ok is false where Lookup does something else: a segment that is
// Not a plain key (Lookup reads numbers, "-", "*" and "[k=v]" as list indexes), or a node on
// the way that is neither a mapping nor null (Lookup fails); the caller asks kyaml.
func LookupNode(n *yaml.Node, path ...string) (v *yaml.Node, ok bool) {
	for _, p := range path {
		if !PlainKey(p) {
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
		n = MappingValue(n, p)
	}
	return n, true
}

// plainKey reports whether kyaml's path lookup reads a path segment as a mapping key.
func PlainKey(p string) bool {
	return p != "" && strings.TrimSpace(p) == p && !strings.ContainsRune("0123456789+-*[", rune(p[0]))
}

// MappingAt returns the mapping at path under the mapping m, creating the missing ones as
// kyaml's LookupCreate does (untagged, block style, appended). ok is false when a node on the
// path is there but not a mapping (a null included), or a segment is not a plain key: kyaml
// does other things there, and the caller leaves the object to it.
func MappingAt(m *yaml.Node, path ...string) (*yaml.Node, bool) {
	if m.Kind != yaml.MappingNode {
		return nil, false
	}
	for _, p := range path {
		if !PlainKey(p) {
			return nil, false // before creating anything: LookupCreate makes lists for indexes
		}
	}
	for _, p := range path {
		v := MappingValue(m, p)
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

// SetScalar sets key of the mapping m to the scalar v as kyaml's FieldSetter does: an
// existing value is overwritten in place by v in its old style; a new key is appended
// (untagged), with v double-quoted when v is a plain string YAML 1.1 reads as another type.
func SetScalar(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			old := m.Content[i+1]
			v.Style = old.Style
			*old = *v
			return
		}
	}
	if yaml.IsYNodeString(v) && v.Style == 0 && NonString(v) {
		v.Style = yaml.DoubleQuotedStyle
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
}

// PlainString reports that a YAML 1.1 parser certainly reads s, as a plain scalar, as a
// string: it starts with a letter, holds letters, digits and ". _ / -" only, and is none of
// YAML 1.1's words for booleans and null. (A YAML 1.1 parser reads a plain scalar that starts
// with a letter as a string unless it is one of those words.) It says false for anything else,
// which is then parsed (yaml.IsYaml1_1NonString).
func PlainString(s string) bool {
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

// NonString is yaml.IsYaml1_1NonString, skipping the parse for strings plainString proves.
func NonString(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && !PlainString(n.Value) && yaml.IsYaml1_1NonString(n)
}

// SetString sets the string field at path under obj (its parent mappings created as kyaml's
// LookupCreate does) to the scalar v, as obj.SetMapField(v, path...) does.
func SetString(obj *yaml.RNode, v *yaml.Node, path ...string) error {
	if obj.IsNil() {
		return obj.SetMapField(yaml.NewRNode(v), path...)
	}
	parent, ok := MappingAt(obj.YNode(), path[:len(path)-1]...)
	if !ok {
		return obj.SetMapField(yaml.NewRNode(v), path...)
	}
	SetScalar(parent, path[len(path)-1], v)
	return nil
}

// LookupCreate is kyaml's LookupCreate of a mapping (n.Pipe(yaml.LookupCreate(yaml.MappingNode,
// path...))) without its filter chain where the path is mappings or missing.
func LookupCreate(n *yaml.RNode, path ...string) (*yaml.RNode, error) {
	if !n.IsNil() {
		if m, ok := MappingAt(n.YNode(), path...); ok {
			return yaml.NewRNode(m), nil
		}
	}
	return n.Pipe(yaml.LookupCreate(yaml.MappingNode, path...))
}

// SetMetadataString sets metadata.<field>.<key> of obj to value as kyaml's SetAnnotation and
// SetLabel do: the value a single-quoted string, in the old value's style where there is one;
// an annotation first drops an empty annotations mapping, and then an empty metadata. Where
// metadata or the field is there but not a mapping, kyaml's filter f does it.
func SetMetadataString(obj *yaml.RNode, field, key, value string) error {
	return SetMetadataStrings(obj, field, []string{key}, []string{value})
}

// SetMetadataStrings sets metadata.<field>.<keys[i]> of obj to values[i], in order, each as
// SetMetadataString sets it; the nodes of the keys it adds are made at once.
func SetMetadataStrings(obj *yaml.RNode, field string, keys, values []string) error {
	root := obj.YNode()
	meta := MappingValue(root, "metadata")
	var m *yaml.Node
	if meta != nil {
		m = MappingValue(meta, field)
	}
	if root.Kind != yaml.MappingNode || (meta != nil && meta.Kind != yaml.MappingNode) || (m != nil && m.Kind != yaml.MappingNode) {
		for i, k := range keys {
			var f yaml.Filter = yaml.SetLabel(k, values[i])
			if field == yaml.AnnotationsField {
				f = yaml.SetAnnotation(k, values[i])
			}
			if err := obj.PipeE(f); err != nil {
				return err
			}
		}
		return nil
	}
	if field == yaml.AnnotationsField {
		if m != nil && len(m.Content) == 0 {
			RemoveField(meta, field)
		}
		if meta != nil && len(meta.Content) == 0 {
			RemoveField(root, "metadata")
		}
	}
	m, _ = MappingAt(root, "metadata", field)
	added := 0
	for _, k := range keys {
		if MappingValue(m, k) == nil {
			added++
		}
	}
	// The keys and values it adds, in one allocation; the mapping grown once.
	nodes := make([]yaml.Node, 0, 2*added)
	m.Content = slices.Grow(m.Content, 2*added)
	for i, k := range keys {
		v := yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: values[i], Style: yaml.SingleQuotedStyle}
		if old := MappingValue(m, k); old != nil {
			v.Style = old.Style
			*old = v
			continue
		}
		nodes = append(nodes, yaml.Node{Kind: yaml.ScalarNode, Value: k}, v)
		m.Content = append(m.Content, &nodes[len(nodes)-2], &nodes[len(nodes)-1])
	}
	return nil
}

// ClearIf removes field of the mapping at path under n when keep returns false for its value.
func ClearIf(n *yaml.RNode, field string, keep func(v string) bool, path ...string) error {
	parent, err := Lookup(n, path...)
	if err != nil || parent == nil {
		return err
	}
	f := parent.Field(field)
	if f == nil || f.Value == nil {
		return nil
	}
	v := ""
	if f.Value.YNode().Kind == yaml.ScalarNode {
		v = f.Value.YNode().Value
	}
	if keep != nil && keep(v) {
		return nil
	}
	_, err = parent.Pipe(yaml.Clear(field))
	return err
}

// Not returns a test that is true of every value but those given.
func Not(values ...string) func(string) bool {
	return func(v string) bool { return !slices.Contains(values, v) }
}

// BoolNode is a YAML boolean.
func BoolNode(b bool) *yaml.RNode {
	return yaml.NewRNode(&yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: fmt.Sprint(b)})
}

// SetIfAbsent sets field of the mapping at path under n (created if need be) when it is absent.
func SetIfAbsent(n *yaml.RNode, field string, value *yaml.RNode, path ...string) error {
	if existing, err := Lookup(n, append(slices.Clone(path), field)...); err != nil || existing != nil {
		return err
	}
	parent, err := LookupCreate(n, path...)
	if err != nil {
		return err
	}
	return parent.PipeE(yaml.SetField(field, value))
}

// QuotedNew quotes a string scalar as kyaml's FieldSetter does when it writes a new value: a
// plain string a YAML 1.1 parser reads as something else is double-quoted.
func QuotedNew(n *yaml.Node) *yaml.Node {
	if yaml.IsYNodeString(n) && n.Style == 0 && NonString(n) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// MappingValue returns the value of key in the mapping m, or nil.
func MappingValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// SetField sets key of the mapping m to v as kyaml's FieldSetter does: an existing value is
// replaced and its style kept (an empty mapping or list first takes v's style, as the merge
// gives it); a new key is appended, tagged keyTag (FieldSetter's are untagged, the patch's
// !!str). It returns v.
func SetField(m *yaml.Node, key string, v *yaml.Node, keyTag string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != key {
			continue
		}
		old := m.Content[i+1]
		if old.Kind != yaml.ScalarNode && len(old.Content) == 0 {
			old.Style = v.Style
		}
		v.Style = old.Style
		m.Content[i+1] = v
		return v
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: keyTag, Value: key}, v)
	return v
}

// RemoveField removes key from the mapping m.
func RemoveField(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = slices.Delete(m.Content, i, i+2)
			return
		}
	}
}

// ScalarValue returns the value of a scalar node, "" for nil or another kind.
func ScalarValue(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == yaml.NodeTagNull {
		return ""
	}
	return n.Value
}

// RefLookup returns the value of key in mapping m, or nil.
func RefLookup(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// RefScalar returns n when it is a non-null scalar, else nil.
func RefScalar(n *yaml.Node) *yaml.Node {
	if n = RefDeref(n); n == nil || n.Kind != yaml.ScalarNode || IsNull(n) {
		return nil
	}
	return n
}

// KindName names a node kind as errors say it (mapping, sequence, scalar, ...).
func KindName(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	case yaml.DocumentNode:
		return "document"
	default:
		return "node of kind " + strconv.Itoa(int(k))
	}
}

// RefDeref follows an alias node to its anchor; nil stays nil.
func RefDeref(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode {
		return n.Alias
	}
	return n
}

// IsNull reports whether a node is missing or a null scalar.
func IsNull(n *yaml.Node) bool {
	return n == nil || n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == yaml.NodeTagNull)
}

// RefSetString makes n a plain string scalar of value v, quoted where YAML would read it
// as something else.
func RefSetString(n *yaml.Node, v string) {
	if n.Value == v {
		return
	}
	n.Value, n.Tag = v, yaml.NodeTagString
}

// FieldString returns the value of a scalar field of a mapping, "" when it has none.
func FieldString(n *yaml.RNode, field string) string {
	f := n.Field(field)
	if f == nil || f.Value == nil {
		return ""
	}
	return yaml.GetValue(f.Value)
}

// KeepElements keeps the elements of a sequence node for which keep is true.
func KeepElements(seq *yaml.RNode, keep func(*yaml.RNode) bool) error {
	elems, err := seq.Elements()
	if err != nil {
		return err
	}
	var kept []*yaml.Node
	for _, e := range elems {
		if keep(e) {
			kept = append(kept, e.YNode())
		}
	}
	seq.YNode().Content = kept
	return nil
}

// MetadataString is fieldOf(obj, "metadata", field, key), without its lookup's allocations
// where the path is mappings.
func MetadataString(obj *yaml.RNode, field, key string) (string, bool) {
	n, ok := LookupNode(obj.YNode(), "metadata", field, key)
	switch {
	case !ok:
		return StringAt(obj, "metadata", field, key)
	case n == nil || n.Kind != yaml.ScalarNode || n.Tag == yaml.NodeTagNull:
		return "", false
	}
	return n.Value, true
}

// StringAt returns the string at path in obj, if there is one.
func StringAt(obj *yaml.RNode, path ...string) (string, bool) {
	n, err := Lookup(obj, path...)
	if err != nil || n == nil || n.YNode().Kind != yaml.ScalarNode || n.IsNil() {
		return "", false
	}
	return n.YNode().Value, true
}
