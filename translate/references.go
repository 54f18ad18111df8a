package translate

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/topolayer/topolayer/translate/internal/yamlnode"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/kustomize/api/filters/fieldspec"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/kustomize/kyaml/utils"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Reference is an object that a field of another object names, in standalone form.
type Reference struct {
	// Kind is the referenced object's kind.
	Kind schema.GroupKind
	// Namespace is the referenced object's namespace: the one the field carries, or else the
	// nameReferrer's. It is "" for cluster-scoped kinds, and for a namespaced kind named from a
	// cluster-scoped nameReferrer by a field that carries no namespace (a ClusterRole's
	// resourceNames): then any namespace may be meant.
	Namespace string
	// Name is the referenced object's name.
	Name string
}

// String returns the kind, namespace and name: "ConfigMap openshift-authentication/audit".
func (r Reference) String() string {
	if r.Namespace == "" {
		return r.Kind.Kind + " " + r.Name
	}
	return r.Kind.Kind + " " + r.Namespace + "/" + r.Name
}

// Renamed is what a referenced object is called on the target. An empty field means
// "unchanged".
type Renamed struct {
	// Kind is the object's kind on the target when it changed (a ClusterRole that became a
	// Role). It is written only to references that carry a kind (a binding's roleRef).
	Kind string
	// Namespace is the object's namespace on the target. It is written only to references
	// that carry a namespace (RBAC subjects, service references of APIServices and
	// webhooks): any other reference points into the nameReferrer's own namespace, so the
	// nameReferrer must land in the same namespace as the object it names.
	Namespace string
	// Name is the object's name on the target.
	Name string
}

// Renamer answers where a referenced object is on the target.
type Renamer interface {
	// Rename returns what ref is called on the target, and false when it knows no such
	// object: the reference is dangling. An object that keeps its name (one declared
	// external, say) is answered with its own name, not with false.
	Rename(ref Reference) (Renamed, bool)
}

// RenamerFunc lets a function be a Renamer.
type RenamerFunc func(ref Reference) (Renamed, bool)

// Rename calls f.
func (f RenamerFunc) Rename(ref Reference) (Renamed, bool) { return f(ref) }

// RenameMap is a Renamer that knows exactly the references it holds.
type RenameMap map[Reference]Renamed

// Rename looks ref up.
func (m RenameMap) Rename(ref Reference) (Renamed, bool) {
	r, ok := m[ref]
	return r, ok
}

var (
	_ Renamer = RenamerFunc(nil)
	_ Renamer = RenameMap(nil)
)

// RewriteReferences rewrites in place every reference that obj holds in a field of the
// reference table (see ReferenceTable and NameReference). obj is one object in standalone
// form; its metadata.namespace is the namespace its references point into unless a field
// carries its own.
//
// Each reference is asked of r. When r answers, the name is rewritten, and so are the
// namespace and the kind where the reference carries them; changed lists what changed,
// as "spec.template.spec.volumes[0].configMap.name: audit -> openshift-authentication--audit"
// or "roleRef: ClusterRole system:x -> Role --system:x". When r has no answer the reference
// is left as it is and listed in dangling, as
// "spec.template.spec.serviceAccountName: ServiceAccount openshift-authentication/oauth".
// Both lists are in document order. Fields that are absent, null or empty are skipped. A
// name that may be of several kinds (the resourceNames of a rule over configmaps and
// secrets) is asked for each, in table order, until r answers.
//
// The fields are found with kustomize's field-spec filter. RewriteReferences changes
// references only: it does not rename obj itself nor change its kind (convert a
// ClusterRoleBinding whose ClusterRole became a Role separately). An error means obj is
// malformed: not a mapping, a field of the table that holds neither a name nor an object
// reference, or YAML aliases that loop or expand too far. obj is then left unchanged.
func RewriteReferences(obj *yaml.RNode, r Renamer) (changed, dangling []string, err error) {
	if obj.IsNil() {
		return nil, nil, nil
	}
	if k := obj.YNode().Kind; k != yaml.MappingNode {
		return nil, nil, fmt.Errorf("rewrite references: expected an object, found a YAML %s", yamlnode.KindName(k))
	}
	rfs := nameReferrers[obj.GetKind()]
	if len(rfs) == 0 {
		return nil, nil, nil
	}
	if err := refCheckAliases(obj.YNode()); err != nil {
		return nil, nil, fmt.Errorf("rewrite references: %w", err)
	}
	c := refCollector{obj: obj}
	group, version := resid.ParseGroupVersion(obj.GetApiVersion())
	for _, rf := range rfs {
		if (rf.spec.Group != "" && rf.spec.Group != group) || (rf.spec.Version != "" && rf.spec.Version != version) {
			continue // as the filter's isMatchGVK (the kind matches: nameReferrers is by kind)
		}
		if nodes, ok := fieldSpecTargets(obj.YNode(), rf.parts, nil); ok && c.visitAll(rf, nodes) == nil {
			continue
		}
		// kustomize's filter where the walk is not sure to find what it finds, or a visit
		// fails: it words the error. It visits again what the walk visited, which changes
		// nothing (a reference is recorded once per row).
		f := fieldspec.Filter{FieldSpec: rf.spec, SetValue: func(n *yaml.RNode) error { return c.visit(rf, n) }}
		if _, err := f.Filter(obj); err != nil {
			return nil, nil, fmt.Errorf("rewrite references: field %s: %w", rf.path, err)
		}
	}
	if len(c.refs) == 0 {
		return nil, nil, nil
	}
	c.locate()

	ns := obj.GetNamespace()
	for _, ref := range c.refs {
		var (
			query   Reference
			renamed Renamed
			ok      bool
		)
		for _, to := range ref.to {
			query = ref.query(to, ns)
			if renamed, ok = r.Rename(query); ok {
				break
			}
		}
		if !ok {
			dangling = append(dangling, ref.loc+": "+ref.describeDangling(query))
			continue
		}
		if msg, did := ref.apply(renamed); did {
			changed = append(changed, ref.loc+": "+msg)
		}
	}
	return changed, dangling, nil
}

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

// query is the question asked of the Renamer for the candidate kind to.
func (r *nameRef) query(to int, referrerNamespace string) Reference {
	row := &referenceTable[to]
	q := Reference{Kind: row.Kind, Name: r.name.Value}
	if !row.ClusterScoped {
		q.Namespace = referrerNamespace
		if r.ns != nil && r.ns.Value != "" {
			q.Namespace = r.ns.Value
		}
	}
	return q
}

func (r *nameRef) describeDangling(q Reference) string {
	if len(r.to) == 1 {
		return q.String()
	}
	kinds := make([]string, len(r.to))
	for i, to := range r.to {
		kinds[i] = referenceTable[to].Kind.Kind
	}
	q.Kind.Kind = strings.Join(kinds, " or ")
	return q.String()
}

// apply writes renamed into the reference and says what changed.
func (r *nameRef) apply(renamed Renamed) (string, bool) {
	oldName, newName := r.name.Value, cmp.Or(renamed.Name, r.name.Value)
	var oldNs, newNs, oldKind, newKind string
	if r.ns != nil {
		oldNs, newNs = r.ns.Value, cmp.Or(renamed.Namespace, r.ns.Value)
	}
	if r.kind != nil {
		oldKind, newKind = r.kind.Value, cmp.Or(renamed.Kind, r.kind.Value)
	}
	if oldName == newName && oldNs == newNs && oldKind == newKind {
		return "", false
	}
	yamlnode.RefSetString(r.name, newName)
	if r.ns != nil {
		yamlnode.RefSetString(r.ns, newNs)
	}
	if r.kind != nil {
		yamlnode.RefSetString(r.kind, newKind)
	}
	if r.ns == nil && oldKind == newKind {
		return oldName + " -> " + newName, true
	}
	show := func(kind, ns, name string) string {
		s := refQualify(ns, name, r.ns != nil)
		if oldKind != newKind {
			s = kind + " " + s
		}
		return s
	}
	return show(oldKind, oldNs, oldName) + " -> " + show(newKind, newNs, newName), true
}

func refQualify(ns, name string, carriesNamespace bool) string {
	if !carriesNamespace {
		return name
	}
	return ns + "/" + name
}

// refMaxExpandedNodes bounds the size of an object that uses YAML aliases, counted with
// every alias expanded: kustomize's filters follow aliases, so a few nested aliases could
// otherwise make them visit billions of nodes.
const refMaxExpandedNodes = 100_000

// refCheckAliases rejects objects whose YAML aliases kustomize's filters would follow
// forever (an alias inside the node it refers to) or for too long (see
// refMaxExpandedNodes). Objects without aliases, the usual case, cost one walk.
func refCheckAliases(root *yaml.Node) error {
	aliases := 0
	if err := refAliasCycles(root, nil, &aliases); err != nil || aliases == 0 {
		return err
	}
	if refExpandedSize(root, map[*yaml.Node]int{}) > refMaxExpandedNodes {
		return fmt.Errorf("YAML aliases expand the object beyond %d nodes", refMaxExpandedNodes)
	}
	return nil
}

// refAliasCycles counts the aliases under n and returns an error for one that refers to a
// node that contains it. Anchors precede their aliases, so an alias to a node that is not
// its ancestor cannot lead back to it.
func refAliasCycles(n *yaml.Node, ancestors []*yaml.Node, aliases *int) error {
	switch n.Kind {
	case yaml.AliasNode:
		*aliases++
		if slices.Contains(ancestors, n.Alias) {
			return fmt.Errorf("alias *%s refers to a node that contains it", n.Value)
		}
	case yaml.DocumentNode, yaml.MappingNode, yaml.SequenceNode:
		ancestors = append(ancestors, n)
		for _, e := range n.Content {
			if err := refAliasCycles(e, ancestors, aliases); err != nil {
				return err
			}
		}
	}
	return nil
}

// refExpandedSize counts the nodes under n with aliases expanded, up to just past
// refMaxExpandedNodes. n has no alias cycle.
func refExpandedSize(n *yaml.Node, memo map[*yaml.Node]int) int {
	if n.Kind == yaml.AliasNode {
		return refExpandedSize(n.Alias, memo)
	}
	if size, ok := memo[n]; ok {
		return size
	}
	size := 1
	for _, e := range n.Content {
		if size += refExpandedSize(e, memo); size > refMaxExpandedNodes {
			size = refMaxExpandedNodes + 1
			break
		}
	}
	memo[n] = size
	return size
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
