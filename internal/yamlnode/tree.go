package yamlnode

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/yamltag"
)

// Equal compares two nodes as JSON values.
func Equal(a, b *yaml.Node) bool {
	a, b = Deref(a), Deref(b)
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case yaml.ScalarNode:
		return a.Value == b.Value && yamltag.Of(a) == yamltag.Of(b)
	case yaml.SequenceNode:
		if len(a.Content) != len(b.Content) {
			return false
		}
		for i := range a.Content {
			if !Equal(a.Content[i], b.Content[i]) {
				return false
			}
		}
		return true
	case yaml.MappingNode:
		if len(a.Content) != len(b.Content) {
			return false
		}
		inB := KeysOf(b)
		for i := 0; i+1 < len(a.Content); i += 2 {
			k := a.Content[i].Value
			if !inB.Has(k) || !Equal(a.Content[i+1], inB.Value(k)) {
				return false
			}
		}
		return true
	}
	return false
}

// Value converts a node into JSON values as unstructured objects hold them: maps,
// []any, string, int64, float64, bool, nil.
func Value(n *yaml.Node) any {
	n = Deref(n)
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = Value(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, e := range n.Content {
			l[i] = Value(e)
		}
		return l
	}
	switch yamltag.Of(n) {
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

// TreeOf builds the YAML tree of an unstructured object's content (keys in order), for the
// filters that work on trees. It writes each scalar with the tag that keeps its type. The
// nodes, content slices and sorted keys of the tree are allocated at once (treeBuilder).
func TreeOf(v map[string]any) *yaml.RNode {
	var size treeSize
	size.add(v)
	b := treeBuilder{
		nodes: make([]yaml.Node, 0, size.nodes),
		refs:  make([]*yaml.Node, 0, size.refs),
		keys:  make([]string, 0, size.keys),
	}
	return yaml.NewRNode(b.node(v))
}

// TreeBuffer is the memory of the trees TreeOf builds, for a caller that is done with each
// tree before it builds the next: Reset hands the nodes, content and key slices of the last
// tree to the next one. The zero value is ready; nothing may hold a node of its tree after
// Reset (values read from it, strings among them, stay valid).
type TreeBuffer struct {
	b    treeBuilder
	used bool
}

// TreeOf is TreeOf, built in b's memory. Call Reset before the next.
func (t *TreeBuffer) TreeOf(v map[string]any) *yaml.RNode {
	if t.used {
		panic("yamlnode: TreeBuffer.TreeOf before Reset")
	}
	t.used = true
	var size treeSize
	size.add(v)
	t.b.nodes = reuse(t.b.nodes, size.nodes)
	t.b.refs = reuse(t.b.refs, size.refs)
	t.b.keys = reuse(t.b.keys, size.keys)
	return yaml.NewRNode(t.b.node(v))
}

// Reset ends the last tree: its memory goes to the next.
func (t *TreeBuffer) Reset() {
	clear(t.b.nodes)
	clear(t.b.refs)
	clear(t.b.keys)
	t.b.nodes, t.b.refs, t.b.keys, t.used = t.b.nodes[:0], t.b.refs[:0], t.b.keys[:0], false
}

// reuse returns s emptied when it holds n, else a new slice that does.
func reuse[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:0]
	}
	return make([]T, 0, n)
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

// NodeOf returns the node of a value, as treeOf writes it.
func NodeOf(v any) *yaml.Node {
	switch v := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap, Content: make([]*yaml.Node, 0, 2*len(v))}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: k}, NodeOf(v[k]))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: yaml.NodeTagSeq, Content: make([]*yaml.Node, 0, len(v))}
		for _, e := range v {
			n.Content = append(n.Content, NodeOf(e))
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

// Unstructured returns the object a node holds, as an unstructured object; nil when the
// node is not a mapping.
func Unstructured(obj *yaml.RNode) *unstructured.Unstructured {
	m, err := contract.NodeObject(obj.YNode())
	if err != nil {
		return nil
	}
	return &unstructured.Unstructured{Object: m}
}
