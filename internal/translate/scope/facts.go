package scope

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/translate/references"
	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// Facts is what Check reads of one final object, read from its tree once: its selectors and
// the names its references, annotations, Service DNS names and status lists name. What they
// mean for the plan (which pods a selector reaches, which names the plan renamed) Check
// decides once it knows the whole plan. The engine reads them while it still holds the
// object's tree (ReadFacts), so that the check builds no tree again.
type Facts struct {
	// readsStatus and readsChecked say what Check reads of the entry (reads), so that it
	// judges an entry whose object the engine dropped once it read its facts.
	readsStatus, readsChecked bool
	// pods are the labels of the object's pod templates, in the order of its pod specs, when
	// Check reads its selectors and its kind runs pods.
	pods        []labels.Set
	selectors   []selectorFact
	references  []references.Named
	annotations []annotationName
	dns         []dnsName
	status      []statusName
}

// selectorFact is one selector of an object: what is wrong with it on its own (bad), and,
// when it selects something, the selector, the values of the namespace label it requires,
// and the simulated namespaces its pods may be of.
type selectorFact struct {
	where             string
	bad               []string
	sel               labels.Selector
	required, allowed []string
}

// annotationName is a name an annotation of the annotation table gives, of kind to.
type annotationName struct {
	to      schema.GroupKind
	name    string
	message string
}

// dnsName is a Service DNS name in a ConfigMap's or Secret's data, of a Service in the
// standalone namespace.
type dnsName struct {
	namespace, message string
}

// statusName is an entry of a references.StatusReference list, by the identity it names.
type statusName struct {
	id      contract.Key
	message string
}

// reads returns what Check reads of entry e, placed in the HCP namespace hcp: its status
// lists (status), its selectors and references (checked).
func reads(e *plans.Entry, hcp string) (status, checked bool) {
	if e.Object == nil || e.Disposition != routing.Apply || e.Target.Cluster != routing.ClusterManagement || e.Target.Namespace != hcp {
		return false, false
	}
	gk := e.Object.GroupVersionKind().GroupKind()
	status = references.HoldsStatus(gk)
	checked = e.Source.Namespace != "" && e.Source.Namespace != hcp && !e.Action.IsStatus() && CheckReads(gk, e.Source)
	return status, checked
}

// Reads reports whether Check reads entry e, with its final object, placed in the HCP
// namespace hcp: an entry it does not read may drop its object before the plan is checked;
// one it reads keeps it, or its facts (ReadFacts).
func Reads(e *plans.Entry, hcp string) bool {
	status, checked := reads(e, hcp)
	return status || checked
}

// podLabels returns the labels of the pod templates of obj, one set for each of its pod
// specs that has metadata, in the order of its pod specs.
func podLabels(obj *unstructured.Unstructured) []labels.Set {
	var out []labels.Set
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
		out = append(out, set)
	}
	return out
}

// ReadFacts reads the facts of obj, the tree of e's final object, that Check reads of an
// entry placed in the HCP namespace hcp; nil when it reads none. obj is not changed.
func ReadFacts(obj *yaml.RNode, e *plans.Entry, hcp string) *Facts {
	status, checked := reads(e, hcp)
	if !status && !checked {
		return nil
	}
	f := &Facts{readsStatus: status, readsChecked: checked}
	if checked {
		if gvk := e.Object.GroupVersionKind(); podspec.RunsPods(gvk.Group, gvk.GroupKind()) {
			f.pods = podLabels(e.Object)
		}
	}
	if status {
		f.status = statusNames(obj)
	}
	if checked {
		f.selectors = selectorFacts(obj, e.Source, hcp)
		f.references, f.annotations, f.dns = referenceNames(obj)
	}
	return f
}

// selectorFacts reads the selectors of obj, written for src and placed in the HCP namespace
// hcp, as Check judges them.
func selectorFacts(obj *yaml.RNode, src contract.Identity, hcp string) []selectorFact {
	var out []selectorFact
	for _, site := range selectorSites(obj, src.Group, src.Resource) {
		if site.soft && ownNamespaceOnly(site.parent) {
			continue // draws the pod to the nodes of its own hosted control plane's pods, and nothing to them: the hypershift profile's colocation selects that whole control plane
		}
		f := selectorFact{where: strings.Join(site.path, "."), allowed: []string{src.Namespace}}
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
				f.allowed = nil // the selector must say which simulated namespaces
			default:
				continue // other namespaces of the management cluster: scope.Rule warned
			}
		}
		sel, required, err := siteSelector(site)
		if err != nil {
			f.bad = append(f.bad, fmt.Sprintf("%s: %v", f.where, err))
			out = append(out, f)
			continue
		}
		if sel == nil {
			continue // selects nothing
		}
		if f.allowed == nil {
			f.allowed = required
		}
		if len(required) == 0 || !subset(required, f.allowed) {
			f.bad = append(f.bad, fmt.Sprintf("%s: does not keep to simulated namespace %s (%s is not required to be one of %s)", f.where, strings.Join(f.allowed, ", "), namespaces.LabelNamespace, strings.Join(f.allowed, ", ")))
		}
		f.sel, f.required = sel, required
		out = append(out, f)
	}
	return out
}

// referenceNames reads the names obj's references give: the fields of the reference table,
// the annotations of the annotation table that are obj's kind's, and, in a ConfigMap's or a
// Secret's data, the Service DNS names.
func referenceNames(obj *yaml.RNode) ([]references.Named, []annotationName, []dnsName) {
	named, err := references.Names(obj)
	if err != nil {
		named = nil // a malformed object: the check reads none of its references
	}
	gv, _ := schema.ParseGroupVersion(obj.GetApiVersion())
	gk := schema.GroupKind{Group: gv.Group, Kind: obj.GetKind()}
	var annotations []annotationName
	var all map[string]string // read when a reference of the table is the object's
	for a := range references.AnnotationsOf(gk) {
		if a.Referrer != gk {
			continue
		}
		if all == nil {
			all = obj.GetAnnotations()
		}
		if name := all[a.Annotation]; name != "" {
			annotations = append(annotations, annotationName{to: a.To, name: name,
				message: fmt.Sprintf("annotation %s names %s %s, which the plan renamed", a.Annotation, a.To.Kind, name)})
		}
	}
	var dns []dnsName
	if gk.Group == "" && (gk.Kind == "ConfigMap" || gk.Kind == "Secret") {
		_ = references.RewriteData(obj, gk.Kind == "Secret", func(text string) (string, bool) {
			for _, m := range references.FindServiceDNS(text) {
				dns = append(dns, dnsName{namespace: m.Namespace, message: fmt.Sprintf("names Service %s/%s by its standalone DNS name", m.Namespace, m.Name)})
			}
			return text, false
		})
	}
	return named, annotations, dns
}

// statusNames reads the entries of obj's references.StatusReference lists.
func statusNames(obj *yaml.RNode) []statusName {
	gv, _ := schema.ParseGroupVersion(obj.GetApiVersion())
	gk := schema.GroupKind{Group: gv.Group, Kind: obj.GetKind()}
	if original, ok := namespaces.IsShadowGroup(gk.Group); ok {
		gk.Group = original
	}
	var out []statusName
	for path, l := range references.StatusLists(obj, gk) {
		for _, s := range references.StatusEntries(l) {
			out = append(out, statusName{id: s.ID.Key(), message: fmt.Sprintf("%s/%d names %s, which the plan placed under another identity", path, s.Index, s.ID)})
		}
	}
	return out
}

// factsAt returns facts[i], nil when the engine read none for entry i.
func factsAt(facts []*Facts, i int) *Facts {
	if i < len(facts) {
		return facts[i]
	}
	return nil
}

// factsOf returns the facts of entry i of p: facts[i] when the engine read them, else read
// from a tree of the entry's object built for it.
func factsOf(p *plans.Plan, facts []*Facts, i int, hcp string) *Facts {
	if f := factsAt(facts, i); f != nil {
		return f
	}
	f := ReadFacts(yamlnode.TreeOf(p.Entries[i].Object.Object), &p.Entries[i], hcp)
	if f == nil {
		return &Facts{}
	}
	return f
}

// staleStatus lists the status entries of f that name a standalone identity the plan placed
// under another (moved), sorted.
func (f *Facts) staleStatus(moved map[contract.Key]bool) []string {
	var out []string
	for _, s := range f.status {
		if moved[s.id] {
			out = append(out, s.message)
		}
	}
	slices.Sort(out)
	return out
}

// staleReferences lists the references of f, an object in the HCP namespace hcp, that name
// a standalone identity the plan renamed (stale says which), and the Service DNS names that
// name a Service in a simulated standalone namespace.
func (f *Facts) staleReferences(hcp string, stale func(gk schema.GroupKind, name string) bool, simulated map[string]bool) []string {
	var out []string
	for _, n := range f.references {
		// Dangling when no question about it is answered: each names the HCP namespace (or
		// none) and a name the plan renamed.
		if !slices.ContainsFunc(n.Queries, func(q references.Reference) bool {
			return !(q.Namespace == hcp || q.Namespace == "") || !stale(q.Kind, q.Name)
		}) {
			out = append(out, "names a standalone identity the plan renamed: "+n.Dangling)
		}
	}
	for _, a := range f.annotations {
		if stale(a.to, a.name) {
			out = append(out, a.message)
		}
	}
	for _, d := range f.dns {
		if simulated[d.namespace] {
			out = append(out, d.message)
		}
	}
	return out
}
