package declare

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// Declarations is what the configuration could declare so that a plan places the entries it
// refused for want of a declaration: those the operator wrote under Unspecified
// (RuleUnspecified), or in a class whose output-resources do not declare them
// (RuleDeclaredOutputs), and privileged objects the policy does not list
// (RulePrivilegedObject). It is a proposal for a person to review: topolayer never applies it
// nor writes it to a configuration.
type Declarations struct {
	// Snippet is the configuration fragment that declares them, in the configuration's own
	// shape (operators[].supplements.outputs, policy.operators[].privileged); nil when no
	// refused entry can be declared.
	Snippet *DeclarationSnippet `json:"snippet,omitempty"`
	// Notes explain the snippet, one line each: the class chosen for what was written under
	// Unspecified, and each name pattern with the names it stands for.
	Notes []string `json:"notes,omitempty"`
	// Privileges say, one line each, what each privileged object of the snippet grants, to
	// which operator and on which cluster.
	Privileges []string `json:"privileges,omitempty"`
	// Unplaceable are the refused entries no declaration places, each with why.
	Unplaceable []Unplaceable `json:"unplaceable,omitempty"`
}

// DeclarationSnippet is a part of a TopologyConfig: its operators (names and supplements
// only) and its policy (names and privileged objects only). Each list item is to be merged
// into the configuration's item of the same name, or added when there is none.
type DeclarationSnippet struct {
	// Operators are operators[] items: the supplements.outputs of each operator.
	Operators []SupplementSnippet `json:"operators,omitempty"`
	// Policy holds the policy.operators[] items: the privileged objects of each operator.
	Policy *PolicySnippet `json:"policy,omitempty"`
}

// SupplementSnippet is an operators[] item with its name and supplements alone.
type SupplementSnippet struct {
	// Name is the operator's name.
	Name string `json:"name"`
	// Supplements hold the outputs to declare.
	Supplements OutputsSupplement `json:"supplements"`
}

// OutputsSupplement is operators[].supplements with its outputs alone.
type OutputsSupplement struct {
	// Outputs are the output resources to declare, by class.
	Outputs OutputsSnippet `json:"outputs"`
}

// OutputsSnippet is an output-resources document with only the classes it declares anything
// in.
type OutputsSnippet struct {
	ConfigurationResources *contract.OutputResourceList `json:"configurationResources,omitempty"`
	ManagementResources    *contract.OutputResourceList `json:"managementResources,omitempty"`
	UserWorkloadResources  *contract.OutputResourceList `json:"userWorkloadResources,omitempty"`
}

// PolicySnippet is the policy with its operators alone.
type PolicySnippet struct {
	// Operators are policy.operators[] items with their names and privileged objects.
	Operators []PrivilegedSnippet `json:"operators"`
}

// PrivilegedSnippet is a policy.operators[] item with its name and privileged objects alone.
type PrivilegedSnippet struct {
	// Name is the operator's name.
	Name string `json:"name"`
	// Privileged selects each privileged object by class, group, resource and name.
	Privileged []routing.Match `json:"privileged"`
}

// Unplaceable is a refused entry that no declaration places.
type Unplaceable struct {
	// Entry is the entry's index in the plan.
	Entry int `json:"entry"`
	// Source is the standalone identity the operator wrote.
	Source contract.Identity `json:"source"`
	// Rule is the rule that refused it.
	Rule string `json:"rule"`
	// Reason says why no declaration places it.
	Reason string `json:"reason"`
}

// Empty reports whether there is nothing to declare and nothing to say.
func (d *Declarations) Empty() bool {
	return d == nil || d.Snippet == nil && len(d.Notes) == 0 && len(d.Privileges) == 0 && len(d.Unplaceable) == 0
}

// YAML returns the snippet as YAML; nil when there is none.
func (d *Declarations) YAML() ([]byte, error) {
	if d == nil || d.Snippet == nil {
		return nil, nil
	}
	out, err := sigsyaml.Marshal(d.Snippet)
	if err != nil {
		return nil, fmt.Errorf("declarations snippet: %w", err)
	}
	return out, nil
}

// declaration is one object to declare: by whom, in which class, and whether the policy must
// list it too.
type declaration struct {
	operator   string
	class      contract.Class
	id         contract.Identity
	supplement bool // operators[].supplements.outputs
	privileged bool // policy.operators[].privileged
	// unspecified, for what was written under Unspecified, says which class was chosen,
	// why, and where it lands.
	unspecified string
}

// Proposer proposes the declarations a plan lacks: what the engine that made the plan knows
// of the operator and the topology.
type Proposer struct {
	// Operator names the operator.
	Operator string
	// Router places each mutation (the topology's routing table).
	Router routing.Router
	// Names maps standalone identities to target identities.
	Names namespaces.Mapper
	// Declared and Supplement are the operator's output-resources and the configuration's
	// supplement to them.
	Declared, Supplement *contract.OutputResources
	// Policy and Containment are the operator's policy and the management cluster's
	// allow-list.
	Policy      *policy.Policy
	Containment *policy.Containment
}

// Declarations proposes, from a plan the engine made, the configuration entries that would
// place what it refused for want of a declaration (see Declarations), grouped per operator
// and class and deduplicated; names of one family that differ only by an index become one
// name pattern (contract.MatchName), and a note says so. A class is chosen for what was
// written under Unspecified: the class of the operator's other outputs in the same namespace,
// else the first of Management, Configuration and UserWorkload whose placement the routing
// and the management cluster's allow-list accept. Nothing is proposed for what the allow-list of the shared
// management cluster refuses, nor for a privileged object that would land there: those are
// Unplaceable. It returns nil when the plan refused nothing of the kind.
func (e Proposer) Declarations(p *plans.Plan) *Declarations {
	if p == nil {
		return nil
	}
	d := &Declarations{}
	var decls []declaration
	for i, entry := range p.Entries {
		if entry.Disposition != routing.Rejected {
			continue
		}
		operator := cmp.Or(entry.Operator, e.Operator)
		src := entry.Source
		switch entry.Rule {
		case plans.RuleUnspecified:
			class, cluster, why := e.chooseClass(p, entry)
			if why != "" {
				d.Unplaceable = append(d.Unplaceable, Unplaceable{Entry: i, Source: src, Rule: entry.Rule, Reason: why})
				continue
			}
			decls = append(decls, declaration{operator: operator, class: class, id: src, supplement: true,
				privileged: policy.IsPrivileged(src.GroupResource()) && !e.policyLists(class, src),
				unspecified: fmt.Sprintf("written under Unspecified; declared as %s, %s; it lands on the %s cluster",
					class, classReason(p, entry, class), clusterName(cluster))})
		case plans.RuleDeclaredOutputs:
			if _, why := e.placeable(entry.Class, src); why != "" {
				d.Unplaceable = append(d.Unplaceable, Unplaceable{Entry: i, Source: src, Rule: entry.Rule, Reason: why})
				continue
			}
			decls = append(decls, declaration{operator: operator, class: entry.Class, id: src, supplement: true,
				privileged: policy.IsPrivileged(src.GroupResource()) && !e.policyLists(entry.Class, src)})
		case policy.RulePrivilegedObject:
			if !policy.IsPrivileged(src.GroupResource()) {
				d.Unplaceable = append(d.Unplaceable, Unplaceable{Entry: i, Source: src, Rule: entry.Rule, Reason: fmt.Sprintf(
					"%s is not a privileged kind the policy can list (only CustomResourceDefinitions, admission webhook configurations and policies, and APIServices), but what it would be refuses it: %s",
					src.GroupResource(), entry.Reason)})
				continue
			}
			if _, why := e.placeable(entry.Class, src); why != "" {
				d.Unplaceable = append(d.Unplaceable, Unplaceable{Entry: i, Source: src, Rule: entry.Rule, Reason: why})
				continue
			}
			decls = append(decls, declaration{operator: operator, class: entry.Class, id: src,
				supplement: !e.declares(entry.Class, src), privileged: true})
		}
	}
	e.build(d, decls)
	d.Notes = uniqueInOrder(d.Notes)
	if d.Empty() {
		return nil
	}
	return d
}

// chooseClass returns the class to declare an entry written under Unspecified in, the cluster
// it lands on there, or why it lands nowhere.
func (e Proposer) chooseClass(p *plans.Plan, entry plans.Entry) (contract.Class, string, string) {
	candidates := []contract.Class{}
	if c, ok := siblingClass(p, entry); ok {
		candidates = append(candidates, c)
	}
	for _, c := range []contract.Class{contract.ClassManagement, contract.ClassConfiguration, contract.ClassUserWorkload} {
		if !slices.Contains(candidates, c) {
			candidates = append(candidates, c)
		}
	}
	var whys []string
	for _, c := range candidates {
		cluster, why := e.placeable(c, entry.Source)
		if why == "" {
			return c, cluster, ""
		}
		whys = append(whys, fmt.Sprintf("as %s: %s", c, why))
	}
	return "", "", "no class places it: " + strings.Join(whys, "; ")
}

// siblingClass is the class of most of the operator's other outputs in the entry's namespace
// (for a cluster-scoped object, of the same resource), the first in class order on a tie.
func siblingClass(p *plans.Plan, entry plans.Entry) (contract.Class, bool) {
	counts := map[contract.Class]int{}
	for _, o := range p.Entries {
		if o.Operator != entry.Operator || o.Class == contract.ClassUnspecified || o.Class == "" {
			continue
		}
		if o.Source.Namespace != entry.Source.Namespace {
			continue
		}
		if entry.Source.Namespace == "" && o.Source.GroupResource() != entry.Source.GroupResource() {
			continue
		}
		counts[o.Class]++
	}
	best, n := contract.Class(""), 0
	for _, c := range contract.Classes()[:3] {
		if counts[c] > n {
			best, n = c, counts[c]
		}
	}
	return best, n > 0
}

// classReason says why a class was chosen for an entry written under Unspecified.
func classReason(p *plans.Plan, entry plans.Entry, class contract.Class) string {
	if c, ok := siblingClass(p, entry); ok && c == class {
		if entry.Source.Namespace != "" {
			return "as the operator's other outputs in " + entry.Source.Namespace
		}
		return "as the operator's other " + entry.Source.GroupResource().String()
	}
	return "the first class that places it"
}

// clusterName names a routing cluster for a person.
func clusterName(cluster string) string {
	if cluster == routing.ClusterStandalone {
		return "standalone"
	}
	return cluster
}

// placeable returns the cluster an object of class lands on once declared, or why it lands
// nowhere: the routing rejects it, or the shared management cluster's allow-list refuses its
// kind, or it is a privileged object that would land there.
func (e Proposer) placeable(class contract.Class, src contract.Identity) (string, string) {
	d := e.Router.Route(routing.Object{Class: class, Identity: src})
	if d.Disposition == routing.Rejected {
		return "", fmt.Sprintf("the routing rejects it (%s): %s", d.Rule, d.Reason)
	}
	if d.Disposition != routing.Apply || d.Cluster != routing.ClusterManagement || e.Containment == nil {
		return d.Cluster, ""
	}
	target := src
	if e.Names != nil {
		t, err := e.Names.ToTarget(d.Cluster, src)
		if err != nil {
			return "", fmt.Sprintf("it has no name on the management cluster: %v", err)
		}
		target = t
	}
	if policy.IsPrivileged(src.GroupResource()) || policy.IsPrivileged(target.GroupResource()) {
		return "", fmt.Sprintf("%s would land on the shared management cluster, where %s would change what its API server serves or admits for every hosted control plane: the allow-list refuses it, and no declaration places it",
			privilegedKind(src.GroupResource()), src.GroupResource())
	}
	if _, shadow := namespaces.IsShadowGroup(target.Group); shadow {
		return d.Cluster, ""
	}
	o := routing.Object{Class: class, Identity: target}
	matches := func(m routing.Match) bool { return m.Matches(o) }
	if !slices.ContainsFunc(e.Containment.Kinds, matches) && !slices.ContainsFunc(e.Policy.Allowance().Kinds, matches) {
		return "", fmt.Sprintf("%s is not on the shared management cluster's allow-list (docs/security.md): it cannot be placed there", target.GroupResource())
	}
	return d.Cluster, ""
}

// declares reports whether the operator's output-resources or the configuration's supplement
// declare id in class, as a privileged object must be.
func (e Proposer) declares(class contract.Class, id contract.Identity) bool {
	return e.Declared != nil && e.Declared.ForClass(class).Matches(id) ||
		e.Supplement != nil && e.Supplement.ForClass(class).Matches(id)
}

// policyLists reports whether the policy lists id, of class, among the operator's privileged
// objects.
func (e Proposer) policyLists(class contract.Class, id contract.Identity) bool {
	if e.Policy == nil {
		return true // no policy: nothing is refused as privileged
	}
	o := routing.Object{Class: class, Identity: id}
	return slices.ContainsFunc(e.Policy.Privileged, func(m routing.Match) bool { return m.Matches(o) })
}

// privilegedKind names a privileged resource for a person, with what it grants.
func privilegedKind(gr schema.GroupResource) string {
	switch gr.Resource {
	case "customresourcedefinitions":
		return "a CustomResourceDefinition (it adds an API every client of the cluster sees)"
	case "validatingwebhookconfigurations", "mutatingwebhookconfigurations":
		return "an admission webhook configuration (it sends the requests the API server admits to a webhook, which may refuse or change them)"
	case "validatingadmissionpolicies", "mutatingadmissionpolicies":
		return "an admission policy (it decides which requests the API server admits, or changes them)"
	case "validatingadmissionpolicybindings", "mutatingadmissionpolicybindings":
		return "an admission policy binding (it puts an admission policy in force)"
	case "apiservices":
		return "an APIService (it hands an API of the cluster to another server)"
	}
	return gr.String()
}

// build fills the snippet and its notes from the declarations, grouped per operator and
// class, deduplicated, sorted.
func (e Proposer) build(d *Declarations, decls []declaration) {
	type listKey struct {
		operator string
		class    contract.Class
	}
	type familyKey struct {
		listKey
		contract.ResourceTypeIdentifier
		namespace string
	}
	exact := map[familyKey][]string{}
	why := map[contract.Identity]string{} // what was written under Unspecified: its note
	generated := map[listKey][]contract.ExactResourceID{}
	events := map[listKey][]string{}
	privileged := map[string][]routing.Match{}
	var grants []string
	for _, x := range decls {
		lk := listKey{x.operator, x.class}
		id := x.id
		if x.unspecified != "" {
			key := contract.Identity{Group: id.Group, Resource: id.Resource, Namespace: id.Namespace, Name: id.Name, GenerateName: id.GenerateName}
			if id.IsEvent() {
				key.Name, key.GenerateName = "", "" // declared by namespace: one note for them all
			}
			why[key] = x.unspecified
		}
		if x.supplement {
			switch {
			case id.IsEvent():
				events[lk] = appendNew(events[lk], id.Namespace)
			case id.Name == "":
				generated[lk] = appendNew(generated[lk], contract.ExactResourceID{
					ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: id.Group, Version: id.Version, Resource: id.Resource},
					Namespace:              id.Namespace, Name: id.GenerateName})
			default:
				fk := familyKey{lk, contract.ResourceTypeIdentifier{Group: id.Group, Version: id.Version, Resource: id.Resource}, id.Namespace}
				exact[fk] = appendNew(exact[fk], id.Name)
			}
		}
		if x.privileged {
			group := id.Group
			m := routing.Match{Class: x.class, Group: &group, Resource: id.Resource, Name: id.Name, GenerateName: id.GenerateName}
			if id.Name == "" {
				m.GenerateName += "*"
			}
			if !slices.ContainsFunc(privileged[x.operator], func(o routing.Match) bool { return o.String() == m.String() }) {
				privileged[x.operator] = append(privileged[x.operator], m)
				cluster, _ := e.placeable(x.class, id)
				grants = append(grants, fmt.Sprintf("%s: policy.operators[%s].privileged grants operator %s a privilege on the %s cluster: to write %s",
					id, x.operator, x.operator, clusterName(cluster), privilegedKind(id.GroupResource())))
			}
		}
	}
	outputs := map[string]*OutputsSnippet{}
	list := func(lk listKey) *contract.OutputResourceList {
		o := outputs[lk.operator]
		if o == nil {
			o = &OutputsSnippet{}
			outputs[lk.operator] = o
		}
		at := map[contract.Class]**contract.OutputResourceList{
			contract.ClassConfiguration: &o.ConfigurationResources,
			contract.ClassManagement:    &o.ManagementResources,
			contract.ClassUserWorkload:  &o.UserWorkloadResources,
		}[lk.class]
		if *at == nil {
			*at = &contract.OutputResourceList{}
		}
		return *at
	}
	for _, fk := range slices.SortedFunc(maps.Keys(exact), func(a, b familyKey) int {
		return cmp.Or(cmp.Compare(a.operator, b.operator), cmp.Compare(a.class, b.class), cmp.Compare(a.Group, b.Group),
			cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Version, b.Version), cmp.Compare(a.namespace, b.namespace))
	}) {
		l := list(fk.listKey)
		for _, f := range NameFamilies(exact[fk]) {
			l.ExactResources = append(l.ExactResources, contract.ExactResourceID{ResourceTypeIdentifier: fk.ResourceTypeIdentifier, Namespace: fk.namespace, Name: f.Name})
			named := contract.Identity{Group: fk.Group, Resource: fk.Resource, Namespace: fk.namespace, Name: f.Name}
			var parts []string
			if len(f.Members) > 1 {
				parts = append(parts, fmt.Sprintf("a name pattern for %s, which differ only by an index; it matches every other index too", strings.Join(f.Members, ", ")))
			}
			if w := why[contract.Identity{Group: fk.Group, Resource: fk.Resource, Namespace: fk.namespace, Name: f.Members[0]}]; w != "" {
				parts = append(parts, w)
			}
			if len(parts) > 0 {
				d.Notes = append(d.Notes, fmt.Sprintf("%s: %s", named, strings.Join(parts, "; ")))
			}
		}
	}
	for _, id := range slices.SortedFunc(maps.Keys(why), func(a, b contract.Identity) int {
		return cmp.Compare(a.String(), b.String())
	}) {
		if id.Name == "" { // events (by namespace) and generated names: the exact names have theirs
			d.Notes = append(d.Notes, fmt.Sprintf("%s: %s", id, why[id]))
		}
	}
	for lk, ids := range generated {
		l := list(lk)
		l.GeneratedNameResources = append(l.GeneratedNameResources, ids...)
		slices.SortFunc(l.GeneratedNameResources, compareExact)
	}
	for lk, ns := range events {
		l := list(lk)
		l.EventingNamespaces = append(l.EventingNamespaces, ns...)
		slices.Sort(l.EventingNamespaces)
	}
	if len(outputs) == 0 && len(privileged) == 0 {
		return
	}
	s := &DeclarationSnippet{}
	for _, op := range slices.Sorted(maps.Keys(outputs)) {
		s.Operators = append(s.Operators, SupplementSnippet{Name: op, Supplements: OutputsSupplement{Outputs: *outputs[op]}})
	}
	if len(privileged) > 0 {
		s.Policy = &PolicySnippet{}
		for _, op := range slices.Sorted(maps.Keys(privileged)) {
			ms := privileged[op]
			slices.SortFunc(ms, func(a, b routing.Match) int { return cmp.Compare(a.String(), b.String()) })
			s.Policy.Operators = append(s.Policy.Operators, PrivilegedSnippet{Name: op, Privileged: ms})
		}
	}
	d.Snippet = s
	slices.Sort(grants)
	d.Privileges = grants
}

func compareExact(a, b contract.ExactResourceID) int {
	return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

// uniqueInOrder drops the repeats of s, keeping the first of each.
func uniqueInOrder(s []string) []string {
	var out []string
	for _, v := range s {
		out = appendNew(out, v)
	}
	return out
}

// appendNew appends v unless s holds it already.
func appendNew[T comparable](s []T, v T) []T {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// NameFamily is a name to declare and the names it stands for: itself, or, for a name
// pattern, the names of one family that differ only by an index.
type NameFamily struct {
	// Name is an exact name or a name pattern (contract.MatchName).
	Name string
	// Members are the names it stands for, sorted.
	Members []string
}

// NameFamilies folds names that differ only by one all-digit name segment (CAO's
// v4-0-config-user-idp-0-file-data and v4-0-config-user-idp-1-file-data) into a name pattern
// with '*' at that segment (v4-0-config-user-idp-*-file-data); a name alone in its family
// stays as it is. The families are sorted by name, and each name is in one family: where a
// name could join several, the largest family takes it.
func NameFamilies(names []string) []NameFamily {
	names = slices.Clone(names)
	slices.Sort(names)
	names = slices.Compact(names)
	byPattern := map[string][]string{}
	for _, n := range names {
		for _, p := range indexPatterns(n) {
			byPattern[p] = append(byPattern[p], n)
		}
	}
	patterns := slices.SortedFunc(maps.Keys(byPattern), func(a, b string) int {
		return cmp.Or(cmp.Compare(len(byPattern[b]), len(byPattern[a])), cmp.Compare(a, b))
	})
	taken := map[string]bool{}
	var out []NameFamily
	for _, p := range patterns {
		var members []string
		for _, n := range byPattern[p] {
			if !taken[n] {
				members = append(members, n)
			}
		}
		if len(members) < 2 || contract.ValidateNamePattern(p) != nil {
			continue
		}
		for _, n := range members {
			taken[n] = true
		}
		out = append(out, NameFamily{Name: p, Members: members})
	}
	for _, n := range names {
		if !taken[n] {
			out = append(out, NameFamily{Name: n, Members: []string{n}})
		}
	}
	slices.SortFunc(out, func(a, b NameFamily) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// indexPatterns returns the name with each of its all-digit segments (between '-' and '.')
// replaced by contract.NameWildcard, one at a time.
func indexPatterns(name string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(name); i++ {
		if i < len(name) && name[i] != '-' && name[i] != '.' {
			continue
		}
		if seg := name[start:i]; seg != "" && strings.Trim(seg, "0123456789") == "" {
			out = append(out, name[:start]+contract.NameWildcard+name[i:])
		}
		start = i + 1
	}
	return out
}
