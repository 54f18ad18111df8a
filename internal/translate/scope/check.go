package scope

import (
	"fmt"
	"slices"
	"strings"

	"github.com/topolayer/topolayer/internal/parallel"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/translate/references"
	"github.com/topolayer/topolayer/internal/yamlnode"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// RuleCheck names the plan warnings of Check.
const RuleCheck = "hosted/scope-check"

// Violation is one way a hosted object does not keep to its simulated namespace.
type Violation struct {
	// Entry is the index of the offending entry in Plan.Entries.
	Entry int
	// Message says what is wrong, naming the field.
	Message string
}

// Check checks the final objects of p that land in the HCP namespace hcp
// of the management cluster: each label selector of an object from a simulated namespace
// (see Rule) must require its simulated namespace's label, and select no pod
// template of the plan from another simulated namespace nor any of others (the labels of
// pods that are not in the plan: the hosted control plane's own components); a selector that
// reaches other namespaces of the HCP namespace must name them. A preferred pod affinity term
// that reaches no other namespace is not checked: it only makes the nodes of the pods it
// selects, all of the same hosted control plane, more likely for the pod itself, which is how
// HyperShift colocates the pods of one hosted control plane. No reference (a field of the
// reference table, an annotation of references.AnnotationsOf, a Service DNS name in a ConfigMap
// or Secret, an entry of references.StatusReference lists, in status writes too) may name a standalone
// identity the plan renamed or shadowed. discovery nil means
// contract.DefaultDiscovery().
func Check(p *plans.Plan, hcp string, discovery *contract.Discovery, others ...map[string]string) []Violation {
	if discovery == nil {
		discovery = contract.DefaultDiscovery()
	}
	type pod struct {
		ns     string
		labels labels.Set
		entry  int
	}
	type nameKey struct {
		gk   schema.GroupKind
		name string
	}
	var (
		out      []Violation
		checked  []int                     // entries whose selectors and references are checked
		runs     []int                     // among them, those that may hold pod templates
		statuses []int                     // entries that hold references.StatusReference lists
		renamed  = map[nameKey]bool{}      // standalone names the plan changed
		moved    = map[contract.Key]bool{} // standalone identities the plan placed under another
		targets  = map[nameKey]bool{}      // names in the HCP namespace
		simNames = map[string]bool{}       // simulated standalone namespaces
	)
	gkOf := func(id contract.Identity) schema.GroupKind {
		kind, _ := discovery.KindForResource(id.GroupResource())
		return schema.GroupKind{Group: id.Group, Kind: kind}
	}
	// This pass reads identities only. The objects' trees are built where they are read, one
	// object at a time on each core: the check never holds the trees of a whole plan.
	for i, e := range p.Entries {
		if e.Disposition != routing.Apply || e.Target.Cluster != routing.ClusterManagement || e.Target.Namespace != hcp {
			continue
		}
		targets[nameKey{gkOf(e.Target.Identity), e.Target.Name}] = true
		if e.Source.Key() != e.Target.Identity.Key() && !e.Source.IsNamespace() {
			moved[e.Source.Key()] = true
		}
		if e.Object != nil && references.HoldsStatus(e.Object.GroupVersionKind().GroupKind()) {
			statuses = append(statuses, i)
		}
		if e.Source.Namespace == "" || e.Source.Namespace == hcp {
			continue
		}
		simNames[e.Source.Namespace] = true
		if e.Source.Name != e.Target.Name {
			renamed[nameKey{gkOf(e.Source), e.Source.Name}] = true
		}
		if e.Object == nil || e.Action.IsStatus() || !CheckReads(e.Object.GroupVersionKind().GroupKind(), e.Source) {
			continue
		}
		checked = append(checked, i)
		if gvk := e.Object.GroupVersionKind(); podspec.RunsPods(gvk.Group, gvk.GroupKind()) {
			runs = append(runs, i)
		}
	}
	// The labels of the plan's pod templates, in plan order, read from the objects.
	var pods []pod
	for _, i := range runs {
		obj := p.Entries[i].Object
		sites, _ := podspec.SitesOf(obj) // the policy refused an object beyond the search's bounds
		for _, site := range sites {
			meta, ok := site.Metadata()
			if !ok {
				continue
			}
			set := labels.Set{}
			if m, ok := meta.Child("labels").Get(obj.Object).(map[string]any); ok {
				for k, v := range m {
					if v != nil {
						set[k] = fmt.Sprint(v) // a string, unless the policy refuses the object
					}
				}
			}
			pods = append(pods, pod{ns: p.Entries[i].Source.Namespace, labels: set, entry: i})
		}
	}
	// The pod templates by the value of their namespace label: a selector that requires the
	// label to be one of some values matches only those (without the index, the check was
	// quadratic in the plan's workloads).
	byLabel := map[string][]int{}
	for j, pd := range pods {
		if v, ok := pd.labels[namespaces.LabelNamespace]; ok {
			byLabel[v] = append(byLabel[v], j)
		}
	}
	podsFor := func(required []string) []pod {
		if len(required) == 0 {
			return pods
		}
		var idx []int
		for _, v := range slices.Compact(slices.Sorted(slices.Values(required))) {
			idx = append(idx, byLabel[v]...)
		}
		slices.Sort(idx) // plan order, as the warnings were
		out := make([]pod, len(idx))
		for k, j := range idx {
			out[k] = pods[j]
		}
		return out
	}
	for _, i := range statuses {
		for _, msg := range staleStatusReferences(treeOf(p, i), moved) {
			out = append(out, Violation{i, msg})
		}
	}
	// Each object's selectors and references are checked on their own, on every core; the
	// violations keep plan order.
	found := make([][]Violation, len(checked))
	parallel.ForEach(len(checked), func(k int) {
		i := checked[k]
		e, obj := p.Entries[i], treeOf(p, i)
		bad := func(format string, args ...any) {
			found[k] = append(found[k], Violation{i, fmt.Sprintf(format, args...)})
		}
		for _, site := range selectorSites(obj, e.Source.Group, e.Source.Resource) {
			if site.soft && ownNamespaceOnly(site.parent) {
				continue // draws the pod to the nodes of its own hosted control plane's pods, and nothing to them: the hypershift profile's colocation selects that whole control plane
			}
			where := strings.Join(site.path, ".")
			allowed := []string{e.Source.Namespace}
			if site.peer {
				var names []string
				ok := false
				if nl := site.parent.Field("namespaces"); nl != nil && len(nl.Value.YNode().Content) > 0 {
					names, ok = scalarList(nl.Value.YNode())
				} else if ns := site.parent.Field("namespaceSelector"); ns != nil && !ns.Value.IsNil() {
					names, ok = namespaceNames(ns.Value.YNode())
					if !ok {
						continue // selects namespaces by other labels: scope.Rule warned
					}
				} else {
					ok, names = true, nil
				}
				switch {
				case ok && names == nil:
				case ok && slices.Equal(names, []string{hcp}):
					allowed = nil // the selector must say which simulated namespaces
				default:
					continue // other namespaces of the management cluster: scope.Rule warned
				}
			}
			sel, required, err := siteSelector(site)
			if err != nil {
				bad("%s: %v", where, err)
				continue
			}
			if sel == nil {
				continue // selects nothing
			}
			if allowed == nil {
				allowed = required
			}
			if len(required) == 0 || !subset(required, allowed) {
				bad("%s: does not keep to simulated namespace %s (%s is not required to be one of %s)", where, strings.Join(allowed, ", "), namespaces.LabelNamespace, strings.Join(allowed, ", "))
			}
			for _, pd := range podsFor(required) {
				if !slices.Contains(allowed, pd.ns) && sel.Matches(pd.labels) {
					bad("%s: selects the pods of %s from simulated namespace %s", where, p.Entries[pd.entry].Source, pd.ns)
				}
			}
			for _, o := range others {
				if sel.Matches(labels.Set(o)) {
					bad("%s: selects a pod outside the plan labelled %s", where, labels.Set(o))
				}
			}
		}
		for _, msg := range staleReferences(obj, hcp, func(gk schema.GroupKind, name string) bool {
			k := nameKey{gk, name}
			return renamed[k] && !targets[k]
		}, simNames) {
			bad("%s", msg)
		}
	})
	for _, v := range found {
		out = append(out, v...)
	}
	return out
}

// CheckReads reports whether Check reads anything of an object of kind
// gk written for the standalone object src: a selector or its pods' labels, a reference of the
// reference table or the annotation table, Service DNS names in a ConfigMap or Secret, status
// references. Of the others (events, most of what operators write) the check reads no tree,
// and the engine keeps none.
func CheckReads(gk schema.GroupKind, src contract.Identity) bool {
	group, resource := src.Group, src.Resource
	if podspec.MayHold(gk) || podspec.KnownPodBearing(group, resource) {
		return true
	}
	switch {
	case group == "" && (resource == "pods" || resource == "services"),
		group == "policy" && resource == "poddisruptionbudgets",
		group == "networking.k8s.io" && resource == "networkpolicies",
		gk == schema.GroupKind{Kind: "ConfigMap"} || gk == schema.GroupKind{Kind: "Secret"},
		references.HasReferrers(gk.Kind),
		references.HoldsStatus(gk),
		references.HasAnnotations(gk):
		return true
	}
	return false
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// siteSelector returns the selector at site (nil when it selects nothing) and the values its
// namespace-label requirement allows (none when it has no such requirement).
func siteSelector(site selectorSite) (labels.Selector, []string, error) {
	v := site.parent.Field(site.field)
	if site.plain {
		set := labels.Set{}
		if v != nil {
			_ = v.Value.VisitFields(func(n *yaml.MapNode) error {
				set[n.Key.YNode().Value] = n.Value.YNode().Value
				return nil
			})
		}
		if ns, ok := set[namespaces.LabelNamespace]; ok {
			return labels.SelectorFromSet(set), []string{ns}, nil
		}
		return labels.SelectorFromSet(set), nil, nil
	}
	var ls metav1.LabelSelector
	if v == nil || v.Value.IsNil() {
		if site.field == "labelSelector" {
			return nil, nil, nil
		}
	} else {
		// The selector's values as JSON holds them (a YAML 1.1 reading of its text would make
		// "on" or "no" booleans).
		m, ok := yamlnode.Value(v.Value.YNode()).(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("a selector is a mapping, not %s", v.Value.YNode().ShortTag())
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &ls); err != nil {
			return nil, nil, err
		}
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		return nil, nil, err
	}
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		if r.Key() == namespaces.LabelNamespace && (r.Operator() == selection.In || r.Operator() == selection.Equals || r.Operator() == selection.DoubleEquals) {
			return sel, slices.Sorted(func(yield func(string) bool) {
				for v := range r.Values() {
					if !yield(v) {
						return
					}
				}
			}), nil
		}
	}
	return sel, nil, nil
}

// staleReferences lists the references of obj, an object in the HCP namespace hcp, that name
// a standalone identity the plan renamed (stale says which), and the Service DNS names that
// name a Service in a simulated standalone namespace.
func staleReferences(obj *yaml.RNode, hcp string, stale func(gk schema.GroupKind, name string) bool, simulated map[string]bool) []string {
	var out []string
	// The renamer answers "unchanged" or "unknown": obj is not modified, so no copy is needed.
	if _, dangling, err := references.RewriteReferences(obj, references.RenamerFunc(func(ref references.Reference) (references.Renamed, bool) {
		return references.Renamed{}, !(ref.Namespace == hcp || ref.Namespace == "") || !stale(ref.Kind, ref.Name)
	})); err == nil {
		for _, d := range dangling {
			out = append(out, "names a standalone identity the plan renamed: "+d)
		}
	}
	gv, _ := schema.ParseGroupVersion(obj.GetApiVersion())
	gk := schema.GroupKind{Group: gv.Group, Kind: obj.GetKind()}
	var annotations map[string]string // read when a reference of the table is the object's
	for a := range references.AnnotationsOf(gk) {
		if a.Referrer != gk {
			continue
		}
		if annotations == nil {
			annotations = obj.GetAnnotations()
		}
		if name := annotations[a.Annotation]; name != "" && stale(a.To, name) {
			out = append(out, fmt.Sprintf("annotation %s names %s %s, which the plan renamed", a.Annotation, a.To.Kind, name))
		}
	}
	if gk.Group == "" && (gk.Kind == "ConfigMap" || gk.Kind == "Secret") {
		_ = references.RewriteData(obj, gk.Kind == "Secret", func(text string) (string, bool) {
			for _, m := range references.FindServiceDNS(text) {
				if simulated[m.Namespace] {
					out = append(out, fmt.Sprintf("names Service %s/%s by its standalone DNS name", m.Namespace, m.Name))
				}
			}
			return text, false
		})
	}
	return out
}

// treeOf returns the object of entry i of p, which has one, as a YAML tree of its own.
func treeOf(p *plans.Plan, i int) *yaml.RNode {
	return yamlnode.TreeOf(p.Entries[i].Object.Object)
}

// staleStatusReferences lists the entries of obj's references.StatusReference lists that name a standalone
// identity the plan placed under another (moved).
func staleStatusReferences(obj *yaml.RNode, moved map[contract.Key]bool) []string {
	gv, _ := schema.ParseGroupVersion(obj.GetApiVersion())
	gk := schema.GroupKind{Group: gv.Group, Kind: obj.GetKind()}
	if original, ok := namespaces.IsShadowGroup(gk.Group); ok {
		gk.Group = original
	}
	var out []string
	for path, l := range references.StatusLists(obj, gk) {
		for _, s := range references.StatusEntries(l) {
			if moved[s.ID.Key()] {
				out = append(out, fmt.Sprintf("%s/%d names %s, which the plan placed under another identity", path, s.Index, s.ID))
			}
		}
	}
	slices.Sort(out)
	return out
}

// ownNamespaceOnly reports whether the affinity term term selects pods of its pod's own
// namespace only: it names no namespaces and has no namespace selector (an empty one
// selects every namespace).
func ownNamespaceOnly(term *yaml.RNode) bool {
	if nl := term.Field("namespaces"); nl != nil && len(nl.Value.YNode().Content) > 0 {
		return false
	}
	ns := term.Field("namespaceSelector")
	return ns == nil || ns.Value.IsNil()
}
