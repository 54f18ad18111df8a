package yamlnode

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Identical reports whether two trees are the same: kinds, tags, styles, values, anchors,
// aliases and content in order.
func Identical(a, b *yaml.Node) bool {
	if a == b {
		return true
	}
	if a == nil || b == nil || a.Kind != b.Kind || a.Tag != b.Tag || a.Style != b.Style || a.Value != b.Value ||
		a.Anchor != b.Anchor || a.Alias != b.Alias || len(a.Content) != len(b.Content) {
		return false
	}
	for i := range a.Content {
		if !Identical(a.Content[i], b.Content[i]) {
			return false
		}
	}
	return true
}

// CopyTree returns a deep copy of a tree, as kyaml's CopyYNode does (aliases still point to
// their anchors in n), in two allocations: one for the nodes, one for their content slices.
func CopyTree(n *yaml.Node) *yaml.Node { return (*Arena)(nil).Copy(n) }

// Arena hands out the nodes and content slices of a snapshot's copies from chunks that
// the next snapshot reuses (arenas): the copies of a rewrite, most of what the engine would
// otherwise allocate and collect per object, are made in memory already there. A nil arena
// allocates afresh.
type Arena struct {
	nodes []yaml.Node
	refs  []*yaml.Node
}

// copy returns a deep copy of n, as copyTree does, made in the arena.
func (a *Arena) Copy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	nodes, refs := countTree(n)
	if a == nil {
		c := treeCopier{nodes: make([]yaml.Node, 0, nodes), refs: make([]*yaml.Node, 0, refs)}
		return c.copy(n)
	}
	if cap(a.nodes)-len(a.nodes) < nodes {
		// A new chunk; the nodes already handed out stay where they are.
		a.nodes = make([]yaml.Node, 0, max(2*cap(a.nodes), nodes, 256))
	}
	if cap(a.refs)-len(a.refs) < refs {
		a.refs = make([]*yaml.Node, 0, max(2*cap(a.refs), refs, 512))
	}
	c := treeCopier{nodes: a.nodes[len(a.nodes):len(a.nodes):cap(a.nodes)], refs: a.refs[len(a.refs):len(a.refs):cap(a.refs)]}
	out := c.copy(n)
	a.nodes, a.refs = a.nodes[:len(a.nodes)+len(c.nodes)], a.refs[:len(a.refs)+len(c.refs)]
	return out
}

// reset makes the arena's last chunk free for the next snapshot, clearing what it held (so
// that it keeps nothing of the old trees alive).
func (a *Arena) Reset() {
	clear(a.nodes)
	clear(a.refs)
	a.nodes, a.refs = a.nodes[:0], a.refs[:0]
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

// sync makes s, a tree of the snapshot's own, identical to o and returns it (s itself, or a
// copy of o where s is nil or of another kind), making its copies in the arena: it keeps the
// nodes of s that already match, matches a mapping's keys by name where o has gained or lost
// some, and copies what s lacks. No node of o ends up in the result.
func (a *Arena) Sync(s, o *yaml.Node) *yaml.Node {
	if s == nil || o == nil || s.Kind != o.Kind || s.Alias != o.Alias {
		return a.Copy(o)
	}
	if s.Tag != o.Tag || s.Style != o.Style || s.Value != o.Value || s.Anchor != o.Anchor {
		content := s.Content
		*s = *o
		s.Content = content
	}
	switch {
	case len(o.Content) == 0:
		if len(s.Content) != 0 {
			s.Content = nil
		}
	case len(s.Content) == len(o.Content) && (o.Kind != yaml.MappingNode || sameKeys(s, o)):
		for i, e := range o.Content {
			if c := a.Sync(s.Content[i], e); c != s.Content[i] {
				s.Content[i] = c
			}
		}
	case o.Kind == yaml.MappingNode && len(o.Content)%2 == 0:
		s.Content = a.syncMapping(s.Content, o.Content)
	default:
		content := make([]*yaml.Node, len(o.Content))
		for i, e := range o.Content {
			var old *yaml.Node
			if i < len(s.Content) {
				old = s.Content[i]
			}
			content[i] = a.Sync(old, e)
		}
		s.Content = content
	}
	return s
}

// sameKeys reports whether two mappings of one length have the same keys in order.
func sameKeys(a, b *yaml.Node) bool {
	for i := 0; i < len(a.Content); i += 2 {
		if a.Content[i].Value != b.Content[i].Value {
			return false
		}
	}
	return true
}

// syncMapping returns the content of a mapping identical to o, built from the key-value pairs
// of s of the same key (each used once) and copies of the pairs s lacks.
func (a *Arena) syncMapping(s, o []*yaml.Node) []*yaml.Node {
	out := make([]*yaml.Node, len(o))
	used := make([]bool, len(s))
	for i := 0; i+1 < len(o); i += 2 {
		j := 0
		for ; j+1 < len(s) && (used[j] || s[j].Value != o[i].Value); j += 2 {
		}
		if j+1 < len(s) {
			used[j] = true
			out[i], out[i+1] = a.Sync(s[j], o[i]), a.Sync(s[j+1], o[i+1])
		} else {
			out[i], out[i+1] = a.Copy(o[i]), a.Copy(o[i+1])
		}
	}
	return out
}
