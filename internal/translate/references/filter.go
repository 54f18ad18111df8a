package references

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/topolayer/topolayer/internal/yamlnode"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/filters/fieldspec"
	"sigs.k8s.io/kustomize/kyaml/resid"
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
	refs, err := collect(obj)
	if err != nil || len(refs) == 0 {
		return nil, nil, err
	}
	ns := obj.GetNamespace()
	for _, ref := range refs {
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

// Named is one reference an object holds in a field of the reference table (Names).
type Named struct {
	// Queries are what RewriteReferences asks its Renamer about the reference: one per kind
	// it may be of, in table order, until one is answered.
	Queries []Reference
	// Dangling is how RewriteReferences lists the reference when none is answered.
	Dangling string
}

// Names lists, in document order, the references obj holds that RewriteReferences would
// ask about, without asking or changing anything: for a check that answers them later,
// once it knows every name. Its errors are RewriteReferences's.
func Names(obj *yaml.RNode) ([]Named, error) {
	refs, err := collect(obj)
	if err != nil || len(refs) == 0 {
		return nil, err
	}
	ns := obj.GetNamespace()
	out := make([]Named, len(refs))
	for i, ref := range refs {
		var last Reference // what RewriteReferences describes: the last question it asked
		out[i].Queries = make([]Reference, len(ref.to))
		for j, to := range ref.to {
			out[i].Queries[j] = ref.query(to, ns)
			last = out[i].Queries[j]
		}
		out[i].Dangling = ref.loc + ": " + ref.describeDangling(last)
	}
	return out, nil
}

// collect finds the references obj holds in the fields of the reference table, in document
// order: none for an object whose kind names nothing; an error for one that is malformed.
func collect(obj *yaml.RNode) ([]*nameRef, error) {
	if obj.IsNil() {
		return nil, nil
	}
	if k := obj.YNode().Kind; k != yaml.MappingNode {
		return nil, fmt.Errorf("rewrite references: expected an object, found a YAML %s", yamlnode.KindName(k))
	}
	rfs := nameReferrers[obj.GetKind()]
	if len(rfs) == 0 {
		return nil, nil
	}
	if err := refCheckAliases(obj.YNode()); err != nil {
		return nil, fmt.Errorf("rewrite references: %w", err)
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
			return nil, fmt.Errorf("rewrite references: field %s: %w", rf.path, err)
		}
	}
	if len(c.refs) == 0 {
		return nil, nil
	}
	c.locate()
	return c.refs, nil
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
