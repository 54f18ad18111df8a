package references

import (
	"cmp"
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/topolayer/topolayer/internal/yamlnode"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/utils"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// nameReferrer is one FieldSpec of the table, prepared for the filter: spec leads to the
// mappings that hold the referring field, or, for a top-level field, to the field itself.
type nameReferrer struct {
	to       int             // the referenced kind, an index in referenceTable
	spec     types.FieldSpec // the referrer's kind and the path the filter follows
	field    string          // the referring field's own name
	topLevel bool            // spec.Path is the field itself: its parent is the object
	path     string          // the table's path, dotted, to name a field found through an alias
	parts    []string        // spec.Path split as the filter splits it
}

// nameReferrers indexes the table by referrer kind, in table order. Built once, never changed.
var nameReferrers = indexReferrers(referenceTable)

func indexReferrers(table []NameReference) map[string][]nameReferrer {
	out := map[string][]nameReferrer{}
	for to, row := range table {
		for _, spec := range row.FieldSpecs {
			parts := utils.PathSplitter(spec.Path, "/")
			rf := nameReferrer{
				to:    to,
				spec:  spec,
				field: parts[len(parts)-1],
				path:  strings.Join(parts, "."),
			}
			if len(parts) == 1 {
				rf.topLevel = true
			} else {
				escaped := make([]string, len(parts)-1)
				for i, p := range parts[:len(parts)-1] {
					escaped[i] = strings.ReplaceAll(p, "/", `\/`)
				}
				rf.spec.Path = strings.Join(escaped, "/")
			}
			rf.parts = utils.PathSplitter(rf.spec.Path, "/")
			out[spec.Kind] = append(out[spec.Kind], rf)
		}
	}
	return out
}

// nameRef is one reference found in the object.
type nameRef struct {
	to   []int      // candidate referenced kinds, in table order
	name *yaml.Node // the scalar that holds the name
	ns   *yaml.Node // the scalar that holds the namespace, when the reference carries one
	kind *yaml.Node // the scalar that holds the kind, when the reference carries one
	at   *yaml.Node // the node the reference is reported at: the object reference, or the name
	path string     // the table's path of the field, dotted
	loc  string     // at's path in the object
	ord  int        // at's position in document order
}

// refCollector gathers the references of one object before any is rewritten, so that a
// reference is asked once even when several rows of the table find it (a roleRef that
// becomes a Role must not then be read again as a reference to a Role).
type refCollector struct {
	obj   *yaml.RNode
	refs  []*nameRef
	index map[*yaml.Node]*nameRef
}

// fieldSpecTargets appends to out what kustomize's fieldspec filter (no creation) hands its
// SetValue for path under n, in its order: it follows mapping keys and every element of a
// list, and stops at a null or a missing field. ok is false where the filter would do more or
// fail: a segment that is not a plain key or names a list ("x[]", which turns a null into a
// list), a scalar where the path goes on.
func fieldSpecTargets(n *yaml.Node, path []string, out []*yaml.Node) ([]*yaml.Node, bool) {
	switch {
	case n == nil:
		return out, true
	case len(path) == 0:
		return append(out, n), true
	case n.Tag == yaml.NodeTagNull:
		return out, true
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for _, e := range n.Content {
			var ok bool
			if out, ok = fieldSpecTargets(e, path, out); !ok {
				return nil, false
			}
		}
		return out, true
	case yaml.MappingNode:
		if !yamlnode.PlainKey(path[0]) || strings.HasSuffix(path[0], "[]") {
			return nil, false
		}
		return fieldSpecTargets(yamlnode.MappingValue(n, path[0]), path[1:], out)
	case yaml.AliasNode:
		return fieldSpecTargets(n.Alias, path, out)
	}
	return nil, false
}

// visitAll visits what the filter of rf found, in order.
func (c *refCollector) visitAll(rf nameReferrer, nodes []*yaml.Node) error {
	for _, n := range nodes {
		if err := c.visit(rf, yaml.NewRNode(n)); err != nil {
			return err
		}
	}
	return nil
}

// visit receives what the filter found: the field itself for a top-level referrer, or the
// mapping (or list of mappings) that holds it.
func (c *refCollector) visit(rf nameReferrer, n *yaml.RNode) error {
	if rf.topLevel {
		return c.value(rf, c.obj.YNode(), n.YNode())
	}
	parent := yamlnode.RefDeref(n.YNode())
	switch {
	case yamlnode.IsNull(parent):
		return nil
	case parent.Kind == yaml.MappingNode:
		return c.value(rf, parent, yamlnode.RefLookup(parent, rf.field))
	case parent.Kind == yaml.SequenceNode:
		for _, e := range parent.Content {
			if e = yamlnode.RefDeref(e); yamlnode.IsNull(e) {
				continue
			}
			if e.Kind != yaml.MappingNode {
				return errors.New("expected a mapping or a list of mappings above the field")
			}
			if err := c.value(rf, e, yamlnode.RefLookup(e, rf.field)); err != nil {
				return err
			}
		}
		return nil
	default:
		return errors.New("expected a mapping or a list of mappings above the field")
	}
}

// value records the references that v, the referring field of parent, holds.
func (c *refCollector) value(rf nameReferrer, parent, v *yaml.Node) error {
	v = yamlnode.RefDeref(v)
	if yamlnode.IsNull(v) {
		return nil
	}
	row := &referenceTable[rf.to]
	if rf.field == "resourceNames" && !refGrants(parent, row) {
		return nil
	}
	switch v.Kind {
	case yaml.ScalarNode:
		c.add(rf, v, nil, nil, v)
	case yaml.MappingNode:
		c.object(rf, v)
	case yaml.SequenceNode:
		for _, e := range v.Content {
			switch e = yamlnode.RefDeref(e); {
			case yamlnode.IsNull(e):
			case e.Kind == yaml.ScalarNode:
				c.add(rf, e, nil, nil, e)
			case e.Kind == yaml.MappingNode:
				c.object(rf, e)
			default:
				return errors.New("expected a name or an object reference in the list")
			}
		}
	default:
		return errors.New("expected a name, an object reference or a list of them")
	}
	return nil
}

// object records an object reference {name, namespace?, kind?, apiGroup?|apiVersion?} when
// it refers to rf's referenced kind.
func (c *refCollector) object(rf nameReferrer, m *yaml.Node) {
	row := &referenceTable[rf.to]
	name := yamlnode.RefScalar(yamlnode.RefLookup(m, "name"))
	if name == nil {
		return
	}
	kind := yamlnode.RefScalar(yamlnode.RefLookup(m, "kind"))
	if kind != nil && kind.Value != row.Kind.Kind {
		return
	}
	if g := yamlnode.RefScalar(yamlnode.RefLookup(m, "apiGroup")); g != nil && g.Value != row.Kind.Group {
		return
	}
	if v := yamlnode.RefScalar(yamlnode.RefLookup(m, "apiVersion")); v != nil {
		if g, _ := resid.ParseGroupVersion(v.Value); g != row.Kind.Group {
			return
		}
	}
	var ns *yaml.Node
	if !row.ClusterScoped {
		ns = yamlnode.RefScalar(yamlnode.RefLookup(m, "namespace"))
	}
	c.add(rf, name, ns, kind, m)
}

func (c *refCollector) add(rf nameReferrer, name, ns, kind, at *yaml.Node) {
	if name.Kind != yaml.ScalarNode || yamlnode.IsNull(name) || name.Value == "" {
		return
	}
	if r, ok := c.index[name]; ok {
		if !slices.Contains(r.to, rf.to) {
			r.to = append(r.to, rf.to)
		}
		return
	}
	r := &nameRef{to: []int{rf.to}, name: name, ns: ns, kind: kind, at: at, path: rf.path, ord: math.MaxInt}
	if c.index == nil {
		c.index = map[*yaml.Node]*nameRef{}
	}
	c.index[name] = r
	c.refs = append(c.refs, r)
}

// locate names each reference by its path in the object, and sorts them in document order.
func (c *refCollector) locate() {
	// The reference at a node is the last recorded there: through an index, or for a few
	// references (most objects have one to four) a scan from the end.
	var want map[*yaml.Node]*nameRef
	left := 0
	if len(c.refs) > yamlnode.SmallMapping {
		want = make(map[*yaml.Node]*nameRef, len(c.refs))
		for _, r := range c.refs {
			want[r.at] = r
		}
		left = len(want)
	} else {
		for i, r := range c.refs {
			if !slices.ContainsFunc(c.refs[:i], func(o *nameRef) bool { return o.at == r.at }) {
				left++
			}
		}
	}
	at := func(n *yaml.Node) (*nameRef, bool) {
		if want != nil {
			r, ok := want[n]
			return r, ok
		}
		for i := len(c.refs) - 1; i >= 0; i-- {
			if c.refs[i].at == n {
				return c.refs[i], true
			}
		}
		return nil, false
	}
	var (
		stack []refSegment
		ord   int
	)
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if left == 0 {
			return
		}
		if r, ok := at(n); ok && r.loc == "" {
			r.loc, r.ord = refRender(stack), ord
			left--
		}
		ord++
		switch n.Kind {
		case yaml.DocumentNode:
			for _, e := range n.Content {
				walk(e)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				stack = append(stack, refSegment{key: n.Content[i].Value})
				walk(n.Content[i+1])
				stack = stack[:len(stack)-1]
			}
		case yaml.SequenceNode:
			for i, e := range n.Content {
				stack = append(stack, refSegment{index: i, isIndex: true})
				walk(e)
				stack = stack[:len(stack)-1]
			}
		}
	}
	walk(c.obj.YNode())
	for _, r := range c.refs {
		if r.loc == "" { // reached only through a YAML alias: name the table's path
			r.loc = r.path
		}
	}
	slices.SortStableFunc(c.refs, func(a, b *nameRef) int { return cmp.Compare(a.ord, b.ord) })
}

// refSegment is one step of a path in the object: a mapping key or a list index.
type refSegment struct {
	key     string
	index   int
	isIndex bool
}

// refRender writes a path the way apimachinery's field.Path does: spec.volumes[0].secret.
func refRender(stack []refSegment) string {
	var p *field.Path
	for _, s := range stack {
		switch {
		case s.isIndex:
			p = p.Index(s.index)
		case p == nil:
			p = field.NewPath(s.key)
		case strings.ContainsAny(s.key, "./"):
			p = p.Key(s.key)
		default:
			p = p.Child(s.key)
		}
	}
	return p.String()
}

// refGrants says whether an RBAC policy rule's resourceNames name objects of row's kind.
func refGrants(rule *yaml.Node, row *NameReference) bool {
	return refAnyValue(yamlnode.RefLookup(rule, "apiGroups"), func(g string) bool {
		return g == "*" || g == row.Kind.Group
	}) && refAnyValue(yamlnode.RefLookup(rule, "resources"), func(res string) bool {
		return res == "*" || res == row.Resource || strings.HasPrefix(res, row.Resource+"/")
	})
}

// refAnyValue says whether a list of strings has an element for which ok holds.
func refAnyValue(list *yaml.Node, ok func(string) bool) bool {
	if list = yamlnode.RefDeref(list); list == nil || list.Kind != yaml.SequenceNode {
		return false
	}
	for _, e := range list.Content {
		if e = yamlnode.RefDeref(e); e.Kind == yaml.ScalarNode && ok(e.Value) {
			return true
		}
	}
	return false
}

// HasReferrers reports whether objects of the kind may hold a reference of the table: the
// table filter has nothing to do in the others.
func HasReferrers(kind string) bool { return len(nameReferrers[kind]) > 0 }
