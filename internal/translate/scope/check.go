package scope

import (
	"fmt"
	"slices"

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
	return CheckFacts(p, nil, hcp, discovery, others...)
}

// CheckFacts is Check with the facts of the plan's objects the engine read already: facts[i]
// those of entry i (ReadFacts); where it has none, the entry's object is read from a tree
// built for it.
func CheckFacts(p *plans.Plan, facts []*Facts, hcp string, discovery *contract.Discovery, others ...map[string]string) []Violation {
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
	// This pass reads identities only. The objects' facts are read where no engine read them,
	// one object at a time on each core: the check never holds the trees of a whole plan.
	for i, e := range p.Entries {
		if e.Disposition != routing.Apply || e.Target.Cluster != routing.ClusterManagement || e.Target.Namespace != hcp {
			continue
		}
		targets[nameKey{gkOf(e.Target.Identity), e.Target.Name}] = true
		if e.Source.Key() != e.Target.Identity.Key() && !e.Source.IsNamespace() {
			moved[e.Source.Key()] = true
		}
		if e.Source.Namespace != "" && e.Source.Namespace != hcp {
			simNames[e.Source.Namespace] = true
			if e.Source.Name != e.Target.Name {
				renamed[nameKey{gkOf(e.Source), e.Source.Name}] = true
			}
		}
		status, check := reads(&p.Entries[i], hcp)
		if f := factsAt(facts, i); e.Object == nil && f != nil {
			// The engine dropped the object once it read its facts.
			status, check = f.readsStatus, f.readsChecked
		}
		if status {
			statuses = append(statuses, i)
		}
		if !check {
			continue
		}
		checked = append(checked, i)
	}
	// The facts of the entries read, on every core where the engine did not read them.
	all := make([]*Facts, len(p.Entries))
	read := slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(statuses), checked...))))
	parallel.ForEach(len(read), func(k int) { all[read[k]] = factsOf(p, facts, read[k], hcp) })
	// The labels of the plan's pod templates, in plan order, from the facts of the objects.
	var pods []pod
	for _, i := range checked {
		for _, set := range all[i].pods {
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
		for _, msg := range all[i].staleStatus(moved) {
			out = append(out, Violation{i, msg})
		}
	}
	// Each object's selectors and references are judged on their own, on every core; the
	// violations keep plan order.
	found := make([][]Violation, len(checked))
	parallel.ForEach(len(checked), func(k int) {
		i := checked[k]
		bad := func(format string, args ...any) {
			found[k] = append(found[k], Violation{i, fmt.Sprintf(format, args...)})
		}
		for _, f := range all[i].selectors {
			for _, msg := range f.bad {
				bad("%s", msg)
			}
			if f.sel == nil {
				continue
			}
			for _, pd := range podsFor(f.required) {
				if !slices.Contains(f.allowed, pd.ns) && f.sel.Matches(pd.labels) {
					bad("%s: selects the pods of %s from simulated namespace %s", f.where, p.Entries[pd.entry].Source, pd.ns)
				}
			}
			for _, o := range others {
				if f.sel.Matches(labels.Set(o)) {
					bad("%s: selects a pod outside the plan labelled %s", f.where, labels.Set(o))
				}
			}
		}
		for _, msg := range all[i].staleReferences(hcp, func(gk schema.GroupKind, name string) bool {
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
