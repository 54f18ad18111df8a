package translate

import (
	"testing"

	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/internal/yamlnodetest"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestCopyTree: copyTree copies as kyaml's CopyYNode does, and the copy's content slices are
// its own: appending to one leaves the source and the other nodes as they were.
func TestCopyTree(t *testing.T) {
	for _, src := range []string{
		"a: 1\n",
		"a: {b: [1, 2, {c: d}], e: \"x\"}\nf: []\ng: {}\nh: null\n",
		"a: &x {b: c}\nd: *x\n",
		"- a\n- [b, c]\n- {d: e}\n",
	} {
		n := yaml.MustParse(src).YNode()
		ref := yaml.CopyYNode(n)
		c := yamlnode.CopyTree(n)
		if !yamlnode.Identical(c, yaml.CopyYNode(n)) || !yamlnode.Identical(c, n) {
			t.Errorf("%q: the copy differs from CopyYNode's", src)
		}
		c.Content = append(c.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "k"}, &yaml.Node{Kind: yaml.ScalarNode, Value: "v"})
		if len(c.Content[1].Content) > 0 {
			first := c.Content[1]
			first.Content = append(first.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "z"})
		}
		if !yamlnode.Identical(n, ref) {
			t.Errorf("%q: appending to the copy changed the source", src)
		}
	}
}

// TestSnapshot: a snapshot is the object as it was, whatever the steps did, and shares no
// node with it; the operator's tree it starts as is never changed.
func TestSnapshot(t *testing.T) {
	src := yaml.MustParse("a: {b: c, l: [1, 2]}\nm: {x: 1, y: 2, z: 3}\nr: &r {k: v}\ns: *r\n").YNode()
	pristine := yaml.CopyYNode(src)
	obj := yamlnode.CopyTree(src)
	s := &snapshot{copy: src}
	steps := map[string]func(){
		"nothing":     func() {},
		"scalar":      func() { obj.Content[1].Content[1].Value = "d" },
		"style":       func() { obj.Content[1].Content[1].Style = yaml.DoubleQuotedStyle },
		"key removed": func() { yamlnode.RemoveField(obj.Content[3], "y") },
		"key added":   func() { yamlnode.SetScalar(obj.Content[3], "w", &yaml.Node{Kind: yaml.ScalarNode, Value: "4"}) },
		"key renamed": func() { obj.Content[3].Content[0].Value = "x2" },
		"list grows": func() {
			l := obj.Content[1].Content[3]
			l.Content = append(l.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "3"})
		},
		"list shrinks":    func() { l := obj.Content[1].Content[3]; l.Content = l.Content[:1] },
		"kind changes":    func() { obj.Content[1].Content[3] = &yaml.Node{Kind: yaml.ScalarNode, Value: "x"} },
		"mapping emptied": func() { obj.Content[3].Content = nil },
		"root key first": func() {
			obj.Content = append([]*yaml.Node{{Kind: yaml.ScalarNode, Value: "0"}, {Kind: yaml.MappingNode}}, obj.Content...)
		},
	}
	// A step is followed by its diff, or (every other step) says it touched the object, as
	// the steps that record their own changes do.
	for i, name := range []string{"nothing", "scalar", "style", "nothing", "key removed", "key added", "key renamed", "list grows", "list shrinks", "kind changes", "mapping emptied", "root key first", "nothing", "key added", "nothing"} {
		before := s.before(obj)
		if !yamlnode.Identical(before, obj) {
			t.Fatalf("before %s: the snapshot differs from the object", name)
		}
		if shared := sharedNodes(before, obj); shared {
			t.Fatalf("before %s: the snapshot shares nodes with the object", name)
		}
		steps[name]()
		if i%2 == 0 {
			s.diff(before, obj, "", "")
		} else {
			s.touched()
		}
		if !yamlnode.Identical(src, pristine) {
			t.Fatalf("after %s: the operator's tree changed", name)
		}
	}
}

// sharedNodes reports whether two trees share a node (aliases' targets aside).
func sharedNodes(a, b *yaml.Node) bool {
	seen := map[*yaml.Node]bool{}
	var walk func(n *yaml.Node, mark bool) bool
	walk = func(n *yaml.Node, mark bool) bool {
		if n == nil {
			return false
		}
		if mark {
			seen[n] = true
		} else if seen[n] {
			return true
		}
		for _, c := range n.Content {
			if walk(c, mark) {
				return true
			}
		}
		return false
	}
	walk(a, true)
	return walk(b, false)
}

// TestTreeOf: treeOf builds the tree nodeOf builds, node by node.
func TestTreeOf(t *testing.T) {
	for _, v := range []map[string]any{
		{},
		{"a": "x", "b": true, "c": int64(1), "d": 1.5, "e": nil, "f": 3},
		{"m": map[string]any{"z": "1", "a": []any{"x", map[string]any{"k": "v"}, []any{}, nil}}, "l": []any{}, "e": map[string]any{}},
		{"odd": []string{"a"}},
	} {
		if d := yamlnodetest.NodeDiffExact(yamlnode.NodeOf(v), yamlnode.TreeOf(v).YNode(), ""); d != "" {
			t.Errorf("%v: %s", v, d)
		}
	}
}

// TestTreeBuffer: a TreeBuffer builds the tree TreeOf builds, each time in the memory of the
// last once it is Reset, larger or smaller; a tree still in use is not built over (TreeOf
// before Reset panics), and what a tree was changed to does not leak into the next.
func TestTreeBuffer(t *testing.T) {
	var buf yamlnode.TreeBuffer
	for _, v := range []map[string]any{
		{"m": map[string]any{"z": "1", "a": []any{"x", map[string]any{"k": "v"}, []any{}, nil}}, "l": []any{}, "e": map[string]any{}},
		{"a": "x"},
		{"a": "x", "b": true, "c": int64(1), "d": 1.5, "e": nil, "f": 3, "g": []any{"1", "2", "3"}, "h": map[string]any{"i": map[string]any{"j": "k"}}},
		{},
	} {
		tree := buf.TreeOf(v)
		if d := yamlnodetest.NodeDiffExact(yamlnode.NodeOf(v), tree.YNode(), ""); d != "" {
			t.Errorf("%v: %s", v, d)
		}
		// A stage appends to the tree and changes its values.
		tree.YNode().Content = append(tree.YNode().Content, yamlnode.NodeOf("added"), yamlnode.NodeOf("x"))
		for _, n := range tree.YNode().Content {
			n.Value += "-changed"
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Error("TreeOf before Reset did not panic")
				}
			}()
			buf.TreeOf(v)
		}()
		buf.Reset()
	}
}
