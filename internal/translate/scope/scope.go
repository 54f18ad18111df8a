package scope

import (
	"fmt"
	"slices"
	"strings"

	"github.com/topolayer/topolayer/internal/translate/podsecurity"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/internal/yamlnode"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/namespaces"
)

// Rule names the changes that keep label selectors inside their simulated
// namespace (Change.By), and the warnings about selectors it cannot keep there.
//
// In standalone a label selector selects pods of its own namespace only; flattened into the
// HCP namespace it would select the pods of every simulated namespace and of the hosted
// control plane's own components whose labels match. So every pod and pod template placed
// in the HCP namespace is labelled with its standalone namespace (namespaces.LabelNamespace)
// and operator, and every selector of an object from that simulated namespace that selects
// pods in its own namespace is narrowed by the namespace label: a Service's spec.selector,
// a workload's spec.selector, a PodDisruptionBudget's, a NetworkPolicy's podSelector (an
// empty one, "every pod of the namespace", included) and its peers without
// namespaceSelector, and the pod (anti-)affinity and topology spread terms of pod templates
// without namespaces or namespaceSelector. A NetworkPolicy peer or an affinity term that
// reaches other namespaces by kubernetes.io/metadata.name (namespaceSelector, namespaces)
// is rewritten to the HCP namespace and narrowed to the simulated namespaces it named, when
// all of them are simulated in the HCP namespace; otherwise it is left as it is and the
// entry warns, since on the management cluster it reaches that cluster's own namespaces.
//
// A workload's spec.selector is immutable on the API server: a Deployment (StatefulSet,
// DaemonSet, ReplicaSet, Job) that exists in the HCP namespace with the selector it had
// before this rule cannot be updated to the narrowed selector; the API server refuses the
// apply ("field is immutable"). Such an object has to be deleted and created again (the
// plan shows the selector change, attributed to this rule, so the refusal is explained).
const Rule = "hosted/selector-scope"

// labelNamespaceName is the label the API server sets on every Namespace.
const labelNamespaceName = "kubernetes.io/metadata.name"

// selectorSite is one label selector found in an object.
type selectorSite struct {
	path   []string    // where the selector is, for messages
	parent *yaml.RNode // the mapping that holds it
	field  string      // its field in parent
	plain  bool        // a map of labels (a Service's), not a LabelSelector
	peer   bool        // parent is a NetworkPolicy peer or an affinity term: it may reach other namespaces
	create bool        // the field is required: absent means "every pod" (a NetworkPolicy's podSelector)
	soft   bool        // a preferred pod affinity term: it only scores the nodes the pod may run on
}

// podMetadataOf returns the metadata mapping of each pod template of obj (a Pod's own), as
// pointers into obj. With create, a missing one and its labels are created (for a built-in
// kind where its schema has them; for a custom resource in a template that exists).
func podMetadataOf(obj *yaml.RNode, sites []podspec.Site, create bool) ([]*yaml.RNode, error) {
	var out []*yaml.RNode
	for _, site := range sites {
		meta, ok := site.Metadata()
		if !ok {
			continue
		}
		var n *yaml.RNode
		var err error
		keys, plain := meta.AsKeys()
		tmpl := site.Template.Node(obj.YNode())
		switch {
		case create && plain && site.Known:
			if _, err = yamlnode.LookupCreate(obj, append(keys, "labels")...); err == nil {
				n, err = yamlnode.Lookup(obj, keys...)
			}
		case create && tmpl != nil && tmpl.Kind == yaml.MappingNode:
			if _, err = yamlnode.LookupCreate(yaml.NewRNode(tmpl), "metadata", "labels"); err == nil {
				n = yaml.NewRNode(podspec.Keys("metadata").Node(tmpl))
			}
		case tmpl != nil:
			if m := podspec.Keys("metadata").Node(tmpl); m != nil {
				n = yaml.NewRNode(m)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", meta, err)
		}
		if n != nil && n.YNode() != nil && n.YNode().Kind == yaml.MappingNode {
			out = append(out, n)
		}
	}
	return out, nil
}

// selectorSites lists the label selectors of obj (of resource) that select pods.
func selectorSites(obj *yaml.RNode, group, resource string) []selectorSite {
	var out []selectorSite
	at := func(path ...string) *yaml.RNode {
		n, err := yamlnode.Lookup(obj, path...)
		if err != nil || n == nil || n.YNode().Kind != yaml.MappingNode {
			return nil
		}
		return n
	}
	add := func(parent *yaml.RNode, path []string, field string, plain, peer, create bool) {
		if parent == nil {
			return
		}
		if v := parent.Field(field); v == nil || v.Value.IsNil() {
			if !create && !peer {
				return
			}
		}
		out = append(out, selectorSite{path: append(slices.Clone(path), field), parent: parent, field: field, plain: plain, peer: peer, create: create})
	}
	soft := func(n int) { // marks the sites added since there were n
		for i := n; i < len(out); i++ {
			out[i].soft = true
		}
	}
	list := func(parent *yaml.RNode, field string) []*yaml.RNode {
		if parent == nil {
			return nil
		}
		v := parent.Field(field)
		if v == nil || v.Value.YNode().Kind != yaml.SequenceNode {
			return nil
		}
		els, _ := v.Value.Elements()
		return els
	}
	switch {
	case group == "" && resource == "services":
		if s := at("spec"); s != nil && s.Field("selector") != nil && len(s.Field("selector").Value.YNode().Content) > 0 {
			add(s, []string{"spec"}, "selector", true, false, false)
		}
	case group == "policy" && resource == "poddisruptionbudgets":
		add(at("spec"), []string{"spec"}, "selector", false, false, false)
	case group == "networking.k8s.io" && resource == "networkpolicies":
		spec := at("spec")
		add(spec, []string{"spec"}, "podSelector", false, false, true)
		for _, dir := range [][2]string{{"ingress", "from"}, {"egress", "to"}} {
			for i, rule := range list(spec, dir[0]) {
				for j, peer := range list(rule, dir[1]) {
					if peer.Field("ipBlock") != nil {
						continue
					}
					add(peer, []string{"spec", fmt.Sprintf("%s[%d]", dir[0], i), fmt.Sprintf("%s[%d]", dir[1], j)}, "podSelector", false, true, false)
				}
			}
		}
	}
	atPath := func(p podspec.Path) *yaml.RNode {
		n := p.Node(obj.YNode())
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		return yaml.NewRNode(n)
	}
	sites, _ := podspec.SitesIn(obj) // scope refuses an object beyond the search's bounds
	gk := podsecurity.GroupKindOf(obj)
	for _, ps := range sites {
		if ps.HasTemplate && len(ps.Template) > 0 {
			// The selector beside the template: a workload's, a ReplicationController's (a
			// map of labels), a custom resource's (a map of labels unless it has a
			// LabelSelector's fields).
			holder := ps.Template[:len(ps.Template)-1]
			if parent := atPath(holder); parent != nil {
				plain := gk == schema.GroupKind{Kind: "ReplicationController"}
				if !ps.Known {
					if sel := parent.Field("selector"); sel != nil && sel.Value.YNode().Kind == yaml.MappingNode && len(sel.Value.YNode().Content) > 0 {
						plain = sel.Value.Field("matchLabels") == nil && sel.Value.Field("matchExpressions") == nil
					}
				}
				add(parent, []string{holder.String()}, "selector", plain, false, false)
			}
		}
		spec := atPath(ps.Spec)
		if spec == nil {
			continue
		}
		path := []string{ps.Spec.String()}
		in := func(p ...string) *yaml.RNode {
			n, err := yamlnode.Lookup(spec, p...)
			if err != nil || n == nil || n.YNode().Kind != yaml.MappingNode {
				return nil
			}
			return n
		}
		for _, kind := range []string{"podAffinity", "podAntiAffinity"} {
			aff := in("affinity", kind)
			base := append(slices.Clone(path), "affinity", kind)
			for i, term := range list(aff, "requiredDuringSchedulingIgnoredDuringExecution") {
				add(term, append(slices.Clone(base), fmt.Sprintf("requiredDuringSchedulingIgnoredDuringExecution[%d]", i)), "labelSelector", false, true, false)
			}
			for i, w := range list(aff, "preferredDuringSchedulingIgnoredDuringExecution") {
				if term := w.Field("podAffinityTerm"); term != nil && term.Value.YNode().Kind == yaml.MappingNode {
					n := len(out)
					add(term.Value, append(slices.Clone(base), fmt.Sprintf("preferredDuringSchedulingIgnoredDuringExecution[%d]", i), "podAffinityTerm"), "labelSelector", false, true, false)
					if kind == "podAffinity" {
						soft(n)
					}
				}
			}
		}
		for i, c := range list(spec, "topologySpreadConstraints") {
			add(c, append(slices.Clone(path), fmt.Sprintf("topologySpreadConstraints[%d]", i)), "labelSelector", false, false, false)
		}
	}
	return out
}

// Scoper keeps the selectors of one object inside its simulated namespace (Rule): Namespace
// is the object's standalone namespace, HCP the namespace it lands in, Operator the operator
// that wrote it. It collects the warnings about selectors it leaves as they are.
type Scoper struct {
	Namespace, HCP, Operator string
	// Simulated says whether a standalone namespace is simulated in the HCP namespace.
	Simulated func(ns string) bool
	// Warnings are the selectors Scope left as they are, and why.
	Warnings []string
}

// Scope labels obj's pods with their simulated namespace and operator, and narrows its
// selectors (see Rule).
func (s *Scoper) Scope(obj *yaml.RNode, group, resource string) error {
	sites, err := podspec.SitesIn(obj)
	if err != nil {
		return err
	}
	metas, err := podMetadataOf(obj, sites, true)
	if err != nil {
		return err
	}
	for _, meta := range metas {
		labels, err := yamlnode.LookupCreate(meta, "labels")
		if err != nil {
			return err
		}
		for _, kv := range [][2]string{{namespaces.LabelNamespace, s.Namespace}, {namespaces.LabelOperator, s.Operator}} {
			if kv[1] == "" {
				continue
			}
			if err := yamlnode.SetString(labels, yaml.NewStringRNode(kv[1]).YNode(), kv[0]); err != nil {
				return err
			}
		}
	}
	for _, site := range selectorSites(obj, group, resource) {
		if err := s.site(site); err != nil {
			return fmt.Errorf("%s: %w", strings.Join(site.path, "."), err)
		}
	}
	return nil
}

func (s *Scoper) site(site selectorSite) error {
	if site.plain {
		sel, err := yamlnode.LookupCreate(site.parent, site.field)
		if err != nil {
			return err
		}
		return yamlnode.SetString(sel, yaml.NewStringRNode(s.Namespace).YNode(), namespaces.LabelNamespace)
	}
	if !site.peer {
		return narrow(site.parent, site.field, []string{s.Namespace})
	}
	nsSel := site.parent.Field("namespaceSelector")
	nsList := site.parent.Field("namespaces")
	hasNsSel := nsSel != nil && !nsSel.Value.IsNil()
	hasNsList := nsList != nil && nsList.Value.YNode().Kind == yaml.SequenceNode && len(nsList.Value.YNode().Content) > 0
	where := strings.Join(site.path[:len(site.path)-1], ".") // the peer or term
	if v := site.parent.Field(site.field); site.field == "labelSelector" && (v == nil || v.Value.IsNil()) {
		return nil // an affinity term without labelSelector selects nothing
	}
	switch {
	case !hasNsSel && !hasNsList:
		return narrow(site.parent, site.field, []string{s.Namespace})
	case hasNsSel && hasNsList:
		s.warn(fmt.Sprintf("%s: selects by both namespaces and namespaceSelector; left as it is, it may reach pods outside its simulated namespaces", where))
		return nil
	}
	var names []string
	ok := false
	if hasNsList {
		names, ok = scalarList(nsList.Value.YNode())
	} else {
		names, ok = namespaceNames(nsSel.Value.YNode())
	}
	if !ok {
		s.warn(fmt.Sprintf("%s: selects namespaces by labels other than %s; left as it is, on the management cluster it selects that cluster's namespaces", where, labelNamespaceName))
		return nil
	}
	var outside []string
	for _, n := range names {
		if !s.Simulated(n) {
			outside = append(outside, n)
		}
	}
	if len(outside) > 0 {
		s.warn(fmt.Sprintf("%s: reaches namespace %s, which is not a simulated namespace of the hosted control plane; left as it is, on the management cluster it names that cluster's namespace", where, strings.Join(outside, ", ")))
		return nil
	}
	if hasNsList {
		if err := site.parent.PipeE(yaml.SetField("namespaces", yaml.NewListRNode(s.HCP))); err != nil {
			return err
		}
	} else {
		sel := yaml.NewMapRNode(nil)
		if err := sel.PipeE(yaml.SetField("matchLabels", yaml.NewMapRNode(&map[string]string{labelNamespaceName: s.HCP}))); err != nil {
			return err
		}
		if err := site.parent.PipeE(yaml.SetField("namespaceSelector", sel)); err != nil {
			return err
		}
	}
	return narrow(site.parent, site.field, names)
}

func (s *Scoper) warn(msg string) {
	msg = Rule + ": " + msg
	if !slices.Contains(s.Warnings, msg) {
		s.Warnings = append(s.Warnings, msg)
	}
}

// narrow adds to the LabelSelector parent.field (created when absent) the requirement that
// the namespace label be one of nss.
func narrow(parent *yaml.RNode, field string, nss []string) error {
	sel, err := yamlnode.LookupCreate(parent, field)
	if err != nil {
		return err
	}
	if len(nss) == 1 {
		ml, err := yamlnode.LookupCreate(sel, "matchLabels")
		if err != nil {
			return err
		}
		return yamlnode.SetString(ml, yaml.NewStringRNode(nss[0]).YNode(), namespaces.LabelNamespace)
	}
	exprs, err := sel.Pipe(yaml.LookupCreate(yaml.SequenceNode, "matchExpressions"))
	if err != nil {
		return err
	}
	req := yaml.NewMapRNode(&map[string]string{"key": namespaces.LabelNamespace, "operator": "In"})
	if err := req.PipeE(yaml.SetField("values", yaml.NewListRNode(slices.Sorted(slices.Values(nss))...))); err != nil {
		return err
	}
	return exprs.PipeE(yaml.Append(req.YNode()))
}

// namespaceNames returns the namespaces a namespaceSelector names by kubernetes.io/metadata.name
// (matchLabels, or one matchExpressions In), and false when it selects otherwise (by other
// labels, or every namespace).
func namespaceNames(sel *yaml.Node) ([]string, bool) {
	sel = yamlnode.RefDeref(sel)
	if sel == nil || sel.Kind != yaml.MappingNode {
		return nil, false
	}
	ml, me := yamlnode.RefDeref(yamlnode.RefLookup(sel, "matchLabels")), yamlnode.RefDeref(yamlnode.RefLookup(sel, "matchExpressions"))
	mlN, meN := 0, 0
	if ml != nil && ml.Kind == yaml.MappingNode {
		mlN = len(ml.Content) / 2
	}
	if me != nil && me.Kind == yaml.SequenceNode {
		meN = len(me.Content)
	}
	switch {
	case mlN == 1 && meN == 0:
		if ml.Content[0].Value == labelNamespaceName {
			return []string{ml.Content[1].Value}, true
		}
	case mlN == 0 && meN == 1:
		e := yamlnode.RefDeref(me.Content[0])
		if k, op := yamlnode.RefScalar(yamlnode.RefLookup(e, "key")), yamlnode.RefScalar(yamlnode.RefLookup(e, "operator")); k != nil && op != nil && k.Value == labelNamespaceName && op.Value == "In" {
			return scalarList(yamlnode.RefLookup(e, "values"))
		}
	}
	return nil, false
}

func scalarList(n *yaml.Node) ([]string, bool) {
	n = yamlnode.RefDeref(n)
	if n == nil || n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, false
	}
	var out []string
	for _, e := range n.Content {
		if e = yamlnode.RefScalar(e); e == nil {
			return nil, false
		}
		out = append(out, e.Value)
	}
	return out, true
}

// Scopable says whether objects of group and resource have pods or selectors to scope.
func Scopable(group, resource string) bool {
	switch {
	case group == "" && (resource == "pods" || resource == "services"),
		group == "policy" && resource == "poddisruptionbudgets",
		group == "networking.k8s.io" && resource == "networkpolicies":
		return true
	}
	return podspec.KnownPodBearing(group, resource)
}
