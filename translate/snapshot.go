package translate

import "sigs.k8s.io/kustomize/kyaml/yaml"

// snapshot is a copy of an object being rewritten, as it was before the step that is about to
// change it, for diffNodes to record that step's changes. Most steps change nothing: the copy
// is made again only when the object no longer is identical to it.
type snapshot struct {
	copy *yaml.Node
}

// before returns a tree identical to obj as it is now, for the next step to be diffed against;
// the caller does not change it.
func (s *snapshot) before(obj *yaml.Node) *yaml.Node {
	if s.copy == nil || !identical(s.copy, obj) {
		s.copy = copyTree(obj)
	}
	return s.copy
}

// diff returns the changes of a step, as diffNodes does, from before (what before returned)
// to obj: none, without a diff, when obj is still identical to it.
func (s *snapshot) diff(before, obj *yaml.Node, by, kind string) []Change {
	if identical(before, obj) {
		return nil
	}
	return diffNodes(before, obj, by, kind)
}

// identical reports whether two trees are the same: kinds, tags, styles, values, anchors,
// aliases and content in order.
func identical(a, b *yaml.Node) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.Kind != b.Kind || a.Tag != b.Tag || a.Style != b.Style || a.Value != b.Value ||
		a.Anchor != b.Anchor || a.Alias != b.Alias || len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if !identical(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

// copyTree returns a deep copy of a tree, as kyaml's CopyYNode does (aliases still point to
// their anchors in n), in two allocations: one for the nodes, one for their content slices.
func copyTree(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	nodes, refs := countTree(n)
	c := treeCopier{nodes: make([]yaml.Node, 0, nodes), refs: make([]*yaml.Node, 0, refs)}
	return c.copy(n)
}

// countTree returns the number of nodes of a tree and the number of its content references.
func countTree(n *yaml.Node) (nodes, refs int) {
	nodes, refs = 1, len(n.Content)
	for _, e := range n.Content {
		if e != nil {
			en, er := countTree(e)
			nodes, refs = nodes+en, refs+er
		}
	}
	return nodes, refs
}

// treeCopier hands out the nodes and content slices of one copyTree.
type treeCopier struct {
	nodes []yaml.Node
	refs  []*yaml.Node
}

func (c *treeCopier) copy(n *yaml.Node) *yaml.Node {
	c.nodes = append(c.nodes, *n)
	out := &c.nodes[len(c.nodes)-1]
	if len(n.Content) == 0 {
		return out
	}
	start := len(c.refs)
	c.refs = c.refs[:start+len(n.Content)]
	// A full slice expression: appending to one node's content must not overwrite the next's.
	out.Content = c.refs[start : start+len(n.Content) : start+len(n.Content)]
	for i, e := range n.Content {
		if e != nil {
			out.Content[i] = c.copy(e)
		}
	}
	return out
}
