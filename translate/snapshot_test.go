package translate

import (
	"testing"

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
		c := copyTree(n)
		if !identical(c, yaml.CopyYNode(n)) || !identical(c, n) {
			t.Errorf("%q: the copy differs from CopyYNode's", src)
		}
		c.Content = append(c.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "k"}, &yaml.Node{Kind: yaml.ScalarNode, Value: "v"})
		if len(c.Content[1].Content) > 0 {
			first := c.Content[1]
			first.Content = append(first.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "z"})
		}
		if !identical(n, ref) {
			t.Errorf("%q: appending to the copy changed the source", src)
		}
	}
}

// TestSnapshot: a snapshot is copied again only once the object changed.
func TestSnapshot(t *testing.T) {
	obj := yaml.MustParse("a: {b: c}\n").YNode()
	s := &snapshot{}
	first := s.before(obj)
	if s.before(obj) != first {
		t.Error("copied again, unchanged")
	}
	obj.Content[1].Content[1].Value = "d"
	second := s.before(obj)
	if second == first || !identical(second, obj) {
		t.Error("not copied again, changed")
	}
}
