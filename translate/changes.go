package translate

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
)

// Change is one change the engine made to an object's body on its way to the target: where,
// from what to what, and which step made it. The engine records them as it works; the parity
// report attributes differences with them.
type Change struct {
	// Path is the changed field as a JSON pointer (RFC 6901): "/metadata/name",
	// "/spec/template/spec/volumes/0/configMap/name", "/metadata/annotations/a~1b".
	Path string `json:"path"`
	// From and To are the JSON values before and after the change; nil when the field is
	// absent (or null) on that side.
	From any `json:"from,omitempty"`
	To   any `json:"to,omitempty"`
	// By names the step: "namespaces", "reference-table", "event-involved-object",
	// "annotate", a routing rule, or the name of a transform.
	By string `json:"by"`
	// Kind says what kind of change it is: one of the Change* constants.
	Kind string `json:"kind"`
	// Detail says more, where the step has more to say ("simulated namespace").
	Detail string `json:"detail,omitempty"`
}

// Kinds of Change.
const (
	// ChangeRenamed: the object's namespace or name became its target's (simulated namespace,
	// alias).
	ChangeRenamed = "renamed"
	// ChangeShadowed: the apiVersion became the namespaced shadow group's.
	ChangeShadowed = "shadowed"
	// ChangeConverted: the kind or group became another (a ClusterRole placed as a Role).
	ChangeConverted = "converted"
	// ChangeReference: a reference to a renamed object was rewritten.
	ChangeReference = "reference-rewritten"
	// ChangeRecorded: the standalone identity and the operator were recorded on the object.
	ChangeRecorded = "identity-recorded"
	// ChangeTransformed: a transform (a profile's, or a configured patch) changed the body.
	ChangeTransformed = "transformed"
)

// The steps of the engine that changes name in Change.By, besides rules and transforms.
const (
	ByNamespaces          = "namespaces"
	ByReferenceTable      = "reference-table"
	ByEventInvolvedObject = "event-involved-object"
	ByAnnotate            = "annotate"
)

// Details of the engine's own changes.
const (
	detailRenamed  = "simulated namespace"
	detailRecorded = "the standalone identity and the operator, for the inverse mapping"
)

// pointerEscape escapes one JSON pointer segment (RFC 6901): '~' as "~0", '/' as "~1".
func pointerEscape(segment string) string {
	if !strings.ContainsAny(segment, "~/") {
		return segment
	}
	return strings.ReplaceAll(strings.ReplaceAll(segment, "~", "~0"), "/", "~1")
}

// PointerSegments splits a JSON pointer into its unescaped segments; "" is the whole document.
func PointerSegments(pointer string) []string {
	if pointer == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for i, p := range parts {
		if strings.Contains(p, "~") {
			parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		}
	}
	return parts
}

// pointer builds a JSON pointer from path segments.
func pointer(path []string) string {
	var b strings.Builder
	for _, s := range path {
		b.WriteByte('/')
		b.WriteString(pointerEscape(s))
	}
	return b.String()
}

// diffNodes records, as changes by and of kind, every place where after differs from before:
// the smallest subtrees that differ, where mappings recurse key by key (a mapping one side
// lacks is compared with an empty one, so that each key it brings is a change of its own) and
// sequences of equal length index by index. One walk of the two trees: linear in their size.
func diffNodes(before, after *yaml.Node, by, kind string) []Change {
	return diffNodesAt(nil, before, after, by, kind)
}

// diffNodesAt is diffNodes of two subtrees at path: their changes as diffNodes lists them for
// two objects that differ only there.
func diffNodesAt(path []string, before, after *yaml.Node, by, kind string) []Change {
	var out []Change
	var walk func(path []string, a, b *yaml.Node)
	walk = func(path []string, a, b *yaml.Node) {
		a, b = deref(a), deref(b)
		switch {
		case a == nil && b == nil:
			return
		case a != nil && b != nil && len(a.Content) > 0 && identical(a, b):
			// The same tree is the same value: skip the walk of its keys (most of an object
			// is what a step left alone).
			return
		case a != nil && b != nil && a.Kind == yaml.MappingNode && b.Kind == yaml.MappingNode,
			a == nil && b.Kind == yaml.MappingNode, b == nil && a.Kind == yaml.MappingNode:
			walkMappings(path, a, b, walk)
			return
		case a != nil && b != nil && a.Kind == yaml.SequenceNode && b.Kind == yaml.SequenceNode && len(a.Content) == len(b.Content):
			for i := range a.Content {
				walk(append(path, strconv.Itoa(i)), a.Content[i], b.Content[i])
			}
			return
		case a != nil && b != nil && nodesEqual(a, b):
			return
		}
		out = append(out, Change{Path: pointer(path), From: nodeValue(a), To: nodeValue(b), By: by, Kind: kind})
	}
	walk(slices.Clip(slices.Clone(path)), before, after)
	return out
}

// walkMappings walks the keys of two mappings (either may be nil): a's keys in order, then the
// keys only b has. The walk appends to path: a child's path shares its parent's array, which
// holds while the walk is in the child (the walk is depth first and reads path only then).
func walkMappings(path []string, a, b *yaml.Node, walk func([]string, *yaml.Node, *yaml.Node)) {
	inA, inB := keysOf(a), keysOf(b)
	if a != nil {
		for i := 0; i+1 < len(a.Content); i += 2 {
			k := a.Content[i].Value
			walk(append(path, k), a.Content[i+1], inB.value(k))
		}
	}
	if b != nil {
		for i := 0; i+1 < len(b.Content); i += 2 {
			if k := b.Content[i].Value; !inA.has(k) {
				walk(append(path, k), nil, b.Content[i+1])
			}
		}
	}
}

// mappingKeys finds the values of a mapping's keys: by scanning a small mapping, through an
// index of a large one.
type mappingKeys struct {
	m     *yaml.Node
	index map[string]*yaml.Node
}

// smallMapping is the most keys a mapping has for mappingKeys to scan it.
const smallMapping = 16

func keysOf(m *yaml.Node) mappingKeys {
	k := mappingKeys{m: m}
	if m != nil && len(m.Content) > 2*smallMapping {
		k.index = make(map[string]*yaml.Node, len(m.Content)/2)
		for i := 0; i+1 < len(m.Content); i += 2 {
			k.index[m.Content[i].Value] = m.Content[i+1]
		}
	}
	return k
}

// value returns the value of key (the last, with duplicate keys, as an index holds it); nil
// for none.
func (k mappingKeys) value(key string) *yaml.Node {
	if k.index != nil {
		return k.index[key]
	}
	return mappingValueIn(k.m, key)
}

func (k mappingKeys) has(key string) bool {
	if k.index != nil {
		_, ok := k.index[key]
		return ok
	}
	return k.m != nil && hasKey(k.m, key)
}

// mappingValueIn returns the value of key in the mapping m (nil for none, or a nil m); with
// duplicate keys, the last, as a map of the keys would.
func mappingValueIn(m *yaml.Node, key string) *yaml.Node {
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

func hasKey(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

// deref follows aliases and documents; a null scalar is nil.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && (n.Kind == yaml.AliasNode || n.Kind == yaml.DocumentNode) {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) == 1 {
			n = n.Content[0]
		} else {
			return nil
		}
	}
	if n != nil && n.Kind == yaml.ScalarNode && shortTag(n) == yaml.NodeTagNull {
		return nil
	}
	return n
}

// shortTag is n.ShortTag(), without its work for the tags the engine's trees hold: a tag in
// the short "!!" form is its own short tag.
func shortTag(n *yaml.Node) string {
	if strings.HasPrefix(n.Tag, "!!") {
		return n.Tag
	}
	return n.ShortTag()
}

// nodesEqual compares two nodes as JSON values.
func nodesEqual(a, b *yaml.Node) bool {
	a, b = deref(a), deref(b)
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case yaml.ScalarNode:
		return a.Value == b.Value && shortTag(a) == shortTag(b)
	case yaml.SequenceNode:
		if len(a.Content) != len(b.Content) {
			return false
		}
		for i := range a.Content {
			if !nodesEqual(a.Content[i], b.Content[i]) {
				return false
			}
		}
		return true
	case yaml.MappingNode:
		if len(a.Content) != len(b.Content) {
			return false
		}
		inB := keysOf(b)
		for i := 0; i+1 < len(a.Content); i += 2 {
			k := a.Content[i].Value
			if !inB.has(k) || !nodesEqual(a.Content[i+1], inB.value(k)) {
				return false
			}
		}
		return true
	}
	return false
}

// nodeValue converts a node into JSON values as unstructured objects hold them: maps,
// []any, string, int64, float64, bool, nil.
func nodeValue(n *yaml.Node) any {
	n = deref(n)
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = nodeValue(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, e := range n.Content {
			l[i] = nodeValue(e)
		}
		return l
	}
	switch shortTag(n) {
	case yaml.NodeTagNull:
		return nil
	case yaml.NodeTagInt:
		var i int64
		if err := n.Decode(&i); err == nil {
			return i
		}
		var f float64
		if err := n.Decode(&f); err == nil {
			return f
		}
	case yaml.NodeTagFloat:
		var f float64
		if err := n.Decode(&f); err == nil {
			return f
		}
	case yaml.NodeTagBool:
		var b bool
		if err := n.Decode(&b); err == nil {
			return b
		}
	case "!!timestamp":
		var t time.Time
		if err := n.Decode(&t); err == nil {
			return t.Format(time.RFC3339Nano)
		}
	}
	return n.Value
}

// treeOf builds the YAML tree of an unstructured object's content (keys in order), for the
// filters that work on trees. It writes each scalar with the tag that keeps its type. The
// nodes, content slices and sorted keys of the tree are allocated at once (treeBuilder).
func treeOf(v map[string]any) *yaml.RNode {
	var size treeSize
	size.add(v)
	b := treeBuilder{
		nodes: make([]yaml.Node, 0, size.nodes),
		refs:  make([]*yaml.Node, 0, size.refs),
		keys:  make([]string, 0, size.keys),
	}
	return yaml.NewRNode(b.node(v))
}

// treeSize counts what the tree of a value holds.
type treeSize struct{ nodes, refs, keys int }

func (s *treeSize) add(v any) {
	s.nodes++
	switch v := v.(type) {
	case map[string]any:
		s.nodes += len(v)
		s.refs += 2 * len(v)
		s.keys += len(v)
		for _, e := range v {
			s.add(e)
		}
	case []any:
		s.refs += len(v)
		for _, e := range v {
			s.add(e)
		}
	}
}

// treeBuilder hands out the nodes, content slices and key slices of one treeOf.
type treeBuilder struct {
	nodes []yaml.Node
	refs  []*yaml.Node
	keys  []string
}

func (b *treeBuilder) new(n yaml.Node) *yaml.Node {
	b.nodes = append(b.nodes, n)
	return &b.nodes[len(b.nodes)-1]
}

// content returns n content slots; a full slice expression, so that appending to one node's
// content does not overwrite the next's.
func (b *treeBuilder) content(n int) []*yaml.Node {
	start := len(b.refs)
	b.refs = b.refs[:start+n]
	return b.refs[start : start : start+n]
}

func (b *treeBuilder) node(v any) *yaml.Node {
	switch v := v.(type) {
	case map[string]any:
		n := b.new(yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: b.content(2 * len(v))})
		start := len(b.keys)
		for k := range v {
			b.keys = append(b.keys, k)
		}
		keys := b.keys[start:len(b.keys):len(b.keys)]
		slices.Sort(keys)
		for _, k := range keys {
			n.Content = append(n.Content, b.new(yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: k}), b.node(v[k]))
		}
		return n
	case []any:
		n := b.new(yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: b.content(len(v))})
		for _, e := range v {
			n.Content = append(n.Content, b.node(e))
		}
		return n
	}
	return b.new(scalarOf(v))
}

// nodeOf returns the node of a value, as treeOf writes it.
func nodeOf(v any) *yaml.Node {
	switch v := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: make([]*yaml.Node, 0, 2*len(v))}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: k}, nodeOf(v[k]))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: make([]*yaml.Node, 0, len(v))}
		for _, e := range v {
			n.Content = append(n.Content, nodeOf(e))
		}
		return n
	}
	n := scalarOf(v)
	return &n
}

// scalarOf returns the node of a scalar value of an unstructured object.
func scalarOf(v any) yaml.Node {
	switch v := v.(type) {
	case string:
		return yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: v}
	case bool:
		return yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagBool, Value: strconv.FormatBool(v)}
	case int64:
		return yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: strconv.FormatInt(v, 10)}
	case int:
		return yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagInt, Value: strconv.Itoa(v)}
	case float64:
		return yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagFloat, Value: strconv.FormatFloat(v, 'g', -1, 64)}
	case nil:
		return yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagNull, Value: "null"}
	}
	// Other types do not occur in unstructured objects; write their text.
	return yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: fmt.Sprint(v)}
}

// unstructuredOf returns the object a node holds, as an unstructured object; nil when the
// node is not a mapping.
func unstructuredOf(obj *yaml.RNode) *unstructured.Unstructured {
	m, err := contract.NodeObject(obj.YNode())
	if err != nil {
		return nil
	}
	return &unstructured.Unstructured{Object: m}
}
