package index

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/contract"
)

// AllNamespaces in a Scope means every namespace (and, for cluster-scoped resources, the
// cluster scope).
const AllNamespaces = "*"

// Index maps a standalone object to the operators that read it, from their declared
// input-resources (applyConfigurationResources). It is safe for concurrent use.
type Index struct {
	mu        sync.RWMutex
	exact     map[contract.Key][]string
	patterns  []pattern
	selected  []selected
	refs      []reference
	resolved  map[string]map[contract.Key]bool // operator → the objects its references named last
	operators []string
}

type selected struct {
	operator                   string
	group, resource, namespace string // namespace "" = every namespace
	selector                   labels.Selector
}

// pattern is an exact input whose name is a pattern (contract.MatchName): every object of
// its type in its namespace whose name matches it.
type pattern struct {
	operator                            string
	group, resource, namespace, pattern string
}

// reference is the type of objects an operator's resource reference may name.
type reference struct {
	operator        string
	group, resource string
	namespace       string // fixed namespace (implicit references); "" = any
}

// New returns an empty Index.
func New() *Index {
	return &Index{exact: map[contract.Key][]string{}, resolved: map[string]map[contract.Key]bool{}}
}

// Add records what operator reads. A label selector that does not parse is an error naming
// the operator and the entry.
func (ix *Index) Add(operator string, in *contract.InputResources) error {
	l := in.ApplyConfigurationResources
	var sel []selected
	for i, s := range l.LabelSelectedResources {
		ls, err := metav1.LabelSelectorAsSelector(&s.LabelSelector)
		if err != nil {
			return fmt.Errorf("operator %s: labelSelectedResources[%d]: %w", operator, i, err)
		}
		sel = append(sel, selected{operator: operator, group: s.Group, resource: s.Resource, namespace: s.Namespace, selector: ls})
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if !slices.Contains(ix.operators, operator) {
		ix.operators = append(ix.operators, operator)
	}
	addExact := func(e contract.ExactResourceID) {
		k := contract.Key{Group: e.Group, Resource: e.Resource, Namespace: e.Namespace, Name: e.Name}
		if !slices.Contains(ix.exact[k], operator) {
			ix.exact[k] = append(ix.exact[k], operator)
		}
	}
	for _, e := range l.ExactResources {
		if contract.IsNamePattern(e.Name) {
			ix.patterns = append(ix.patterns, pattern{operator: operator, group: e.Group, resource: e.Resource, namespace: e.Namespace, pattern: e.Name})
			continue
		}
		addExact(e)
	}
	ix.selected = append(ix.selected, sel...)
	for _, r := range l.ResourceReferences {
		addExact(r.ReferringResource)
		switch {
		case r.ImplicitNamespacedReference != nil:
			t := r.ImplicitNamespacedReference
			ix.refs = append(ix.refs, reference{operator: operator, group: t.Group, resource: t.Resource, namespace: t.Namespace})
		case r.ExplicitNamespacedReference != nil:
			t := r.ExplicitNamespacedReference
			ix.refs = append(ix.refs, reference{operator: operator, group: t.Group, resource: t.Resource})
		case r.ClusterScopedReference != nil:
			t := r.ClusterScopedReference
			ix.refs = append(ix.refs, reference{operator: operator, group: t.Group, resource: t.Resource})
		}
	}
	return nil
}

// Resolve records the objects that operator's resource references named when its inputs
// were last gathered. From then on only those objects (and the referring objects) of the
// referenced types trigger it; before, every object of a referenced type does.
func (ix *Index) Resolve(operator string, named []contract.Identity) {
	set := make(map[contract.Key]bool, len(named))
	for _, id := range named {
		set[id.Key()] = true
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.resolved[operator] = set
}

// Interested returns, sorted, the operators that read the standalone object id, whose
// labels are objLabels.
func (ix *Index) Interested(id contract.Identity, objLabels map[string]string) []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	k := id.Key()
	found := map[string]bool{}
	for _, op := range ix.exact[k] {
		found[op] = true
	}
	for _, p := range ix.patterns {
		if p.group == id.Group && p.resource == id.Resource && p.namespace == id.Namespace && contract.MatchName(p.pattern, id.Name) {
			found[p.operator] = true
		}
	}
	set := labels.Set(objLabels)
	for _, s := range ix.selected {
		if s.group == id.Group && s.resource == id.Resource && (s.namespace == "" || s.namespace == id.Namespace) && s.selector.Matches(set) {
			found[s.operator] = true
		}
	}
	for _, r := range ix.refs {
		if found[r.operator] || r.group != id.Group || r.resource != id.Resource || (r.namespace != "" && r.namespace != id.Namespace) {
			continue
		}
		if named, ok := ix.resolved[r.operator]; !ok || named[k] {
			found[r.operator] = true
		}
	}
	out := make([]string, 0, len(found))
	for op := range found {
		out = append(out, op)
	}
	sort.Strings(out)
	return out
}

// Operators returns the indexed operators in the order they were added.
func (ix *Index) Operators() []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return slices.Clone(ix.operators)
}

// Scope is one resource that some operator reads, and where: the namespaces to watch, or
// AllNamespaces. Cluster-scoped objects have the namespace "".
type Scope struct {
	Resource   schema.GroupVersionResource
	Namespaces []string
}

// Scopes returns the union of every operator's inputs by resource, sorted, for the
// informers to set up: one informer per resource, limited to the namespaces read.
func Scopes(inputs map[string]*contract.InputResources) []Scope {
	byGVR := map[schema.GroupVersionResource]map[string]bool{}
	add := func(t contract.ResourceTypeIdentifier, ns string) {
		gvr := t.GroupVersionResource()
		if byGVR[gvr] == nil {
			byGVR[gvr] = map[string]bool{}
		}
		byGVR[gvr][ns] = true
	}
	for _, in := range inputs {
		l := in.ApplyConfigurationResources
		for _, e := range l.ExactResources {
			add(e.ResourceTypeIdentifier, e.Namespace)
		}
		for _, s := range l.LabelSelectedResources {
			add(s.ResourceTypeIdentifier, cmpOr(s.Namespace, AllNamespaces))
		}
		for _, r := range l.ResourceReferences {
			add(r.ReferringResource.ResourceTypeIdentifier, r.ReferringResource.Namespace)
			switch {
			case r.ImplicitNamespacedReference != nil:
				add(r.ImplicitNamespacedReference.ResourceTypeIdentifier, r.ImplicitNamespacedReference.Namespace)
			case r.ExplicitNamespacedReference != nil:
				add(r.ExplicitNamespacedReference.ResourceTypeIdentifier, AllNamespaces)
			case r.ClusterScopedReference != nil:
				add(r.ClusterScopedReference.ResourceTypeIdentifier, "")
			}
		}
	}
	out := make([]Scope, 0, len(byGVR))
	for gvr, nss := range byGVR {
		s := Scope{Resource: gvr}
		if nss[AllNamespaces] {
			s.Namespaces = []string{AllNamespaces}
		} else {
			s.Namespaces = slices.Sorted(maps.Keys(nss))
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource.String() < out[j].Resource.String() })
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
