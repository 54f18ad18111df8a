package translate

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/component-helpers/auth/rbac/validation"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

// Rule names of the escalation policy's checks.
const (
	// RulePrivilegedObject rejects writes to privileged objects (see IsPrivileged) that the
	// policy does not allow the operator.
	RulePrivilegedObject = "policy/privileged-object"
	// RuleRBACEscalation rejects Roles and ClusterRoles that grant beyond the operator's RBAC
	// ceiling, and bindings to roles that the ceiling cannot vouch for.
	RuleRBACEscalation = "policy/rbac-escalation"
)

// Policy bounds what one operator's outputs may grant or install. The engine rejects every
// mutation beyond it, and with it the whole plan. A nil *Policy checks nothing.
type Policy struct {
	// Privileged selects the privileged objects the operator may create, change or delete,
	// by name or not: the configuration, not the operator, decides. Like every output they
	// must also be declared (Engine.Declared or Engine.Supplement); without declarations (nil
	// Engine.Declared), only those the supplement declares may be written.
	Privileged []routing.Match `json:"privileged,omitempty"`
	// RBAC, when set, is the operator's RBAC ceiling: every Role and ClusterRole and every
	// binding is checked against it, and the roles it lists as bindable may be bound to broad
	// subjects. Set or not, the default containment applies (checkRBACContainment).
	RBAC *RBACCeiling `json:"rbac,omitempty"`
	// PodSecurity says how management-side pods reach Pod Security "restricted":
	// PodSecurityStrip (default, "") or PodSecurityReject. Either way, what fails the check on
	// the final object is refused (RulePodSecurity).
	PodSecurity PodSecurityMode `json:"podSecurity,omitempty"`
	// Management widens the management cluster's allow-list (Engine.Containment) for the
	// operator; nil widens nothing.
	Management *ManagementAllowance `json:"management,omitempty"`
}

// podSecurity returns the policy's pod security mode; a nil policy strips.
func (p *Policy) podSecurity() PodSecurityMode {
	if p == nil || p.PodSecurity == "" {
		return PodSecurityStrip
	}
	return p.PodSecurity
}

// RBACCeiling is what an operator may grant through its RBAC outputs: at most what it holds
// itself. Every rule of every Role and ClusterRole it writes must be covered by Rules (the
// coverage of Kubernetes' own escalation check: verbs, API groups, resources with their
// subresources, resource names and non-resource URLs); every RoleBinding and
// ClusterRoleBinding it writes must refer to a role written in the same plan, whose rules are
// checked, or to one of BindableRoles.
type RBACCeiling struct {
	// Rules are the operator's own rules, typically those of its service account. The ceiling
	// applies whatever the namespace of the Role it is compared with.
	Rules []rbacv1.PolicyRule `json:"rules"`
	// AllowWildcards lets granted rules hold '*' (in verbs, apiGroups, resources or
	// nonResourceURLs); they must still be covered by Rules. Default false: a wildcard grant
	// is rejected.
	AllowWildcards bool `json:"allowWildcards,omitempty"`
	// BindableRoles are existing roles, not written by the operator, that its bindings may
	// refer to. cluster-admin is bindable only when listed here.
	BindableRoles []RoleRef `json:"bindableRoles,omitempty"`
	// Classes are the classes of the outputs the ceiling bounds and widens the default
	// containment for; empty means every class. The RBAC of other classes is held to the
	// default containment alone.
	Classes []contract.Class `json:"classes,omitempty"`
}

// For returns the ceiling when it applies to outputs of class, else nil.
func (c *RBACCeiling) For(class contract.Class) *RBACCeiling {
	if c == nil || (len(c.Classes) > 0 && !slices.Contains(c.Classes, class)) {
		return nil
	}
	return c
}

// RoleRef names a Role (in a namespace) or a ClusterRole.
type RoleRef struct {
	// Kind is Role or ClusterRole.
	Kind string `json:"kind"`
	// Namespace is the Role's namespace; empty for a ClusterRole.
	Namespace string `json:"namespace,omitempty"`
	// Name is the role's name.
	Name string `json:"name"`
}

// String prints the reference as Kind namespace/name or Kind name.
func (r RoleRef) String() string {
	if r.Namespace != "" {
		return r.Kind + " " + r.Namespace + "/" + r.Name
	}
	return r.Kind + " " + r.Name
}

// Kinds of a binding's roleRef.
const (
	KindRole        = "Role"
	KindClusterRole = "ClusterRole"
)

// ClusterAdmin is the ClusterRole that grants everything.
const ClusterAdmin = "cluster-admin"

const (
	groupRBAC                   = "rbac.authorization.k8s.io"
	resourceRoles               = "roles"
	resourceClusterRoles        = "clusterroles"
	resourceRoleBindings        = "rolebindings"
	resourceClusterRoleBindings = "clusterrolebindings"
)

// IsPrivileged reports whether writing an object of the resource changes what the API
// server serves or admits: CustomResourceDefinitions, admission webhook configurations,
// admission policies and their bindings, and APIServices (aggregated APIs).
func IsPrivileged(gr schema.GroupResource) bool {
	switch gr.Group {
	case "apiextensions.k8s.io":
		return gr.Resource == "customresourcedefinitions"
	case "admissionregistration.k8s.io":
		switch gr.Resource {
		case "validatingwebhookconfigurations", "mutatingwebhookconfigurations",
			"validatingadmissionpolicies", "validatingadmissionpolicybindings",
			"mutatingadmissionpolicies", "mutatingadmissionpolicybindings":
			return true
		}
	case "apiregistration.k8s.io":
		return gr.Resource == "apiservices"
	}
	return false
}

// aggregationLabels are the labels that aggregate a ClusterRole's rules into the default
// roles every namespace's admins, editors and viewers are bound to.
var aggregationLabels = []string{
	"rbac.authorization.k8s.io/aggregate-to-admin", "rbac.authorization.k8s.io/aggregate-to-edit",
	"rbac.authorization.k8s.io/aggregate-to-view", "rbac.authorization.k8s.io/aggregate-to-cluster-reader",
}

// widens returns why an object of an ordinary kind widens what many others may do, as a
// privileged object does, and whether it does: a ClusterRole aggregated into the default
// admin, edit or view roles (every namespace's admins, editors or viewers get its rules), a
// PriorityClass that is the global default (every pod without one gets it).
func widens(obj *unstructured.Unstructured) (string, bool) {
	if obj == nil {
		return "", false
	}
	gvk := obj.GroupVersionKind()
	switch {
	case gvk.Group == groupRBAC && gvk.Kind == "ClusterRole":
		labels := obj.GetLabels()
		for _, l := range aggregationLabels {
			if labels[l] == "true" {
				return "its label " + l + " adds its rules to a default role bound in every namespace", true
			}
		}
	case gvk.Group == "scheduling.k8s.io" && gvk.Kind == "PriorityClass":
		if g, _, _ := unstructured.NestedBool(obj.Object, "globalDefault"); g {
			return "globalDefault: every pod without a priority class would get it", true
		}
	}
	return "", false
}

// allowsPrivileged returns "" when the policy lets the engine's operator write the
// privileged object of w, else why not. The policy must list it, and the operator or the
// configuration's supplement must declare it: an engine without declarations (nil
// Engine.Declared) trusts its class folders for ordinary objects, never for privileged ones.
func (e Engine) allowsPrivileged(w *work) string {
	o := w.object()
	if !slices.ContainsFunc(e.Policy.Privileged, func(m routing.Match) bool { return m.Matches(o) }) {
		return "the configuration does not list it (policy.operators[].privileged); an operator's own declarations are not enough"
	}
	if e.Declared == nil && w.entry.DeclaredBy == "" && !(e.Supplement != nil && e.Supplement.ForClass(o.Class).Matches(o.Identity)) {
		return "the operator has no output-resources: without declarations no privileged object is written"
	}
	return ""
}

// checkPrivileged rejects a write to a privileged object the policy does not allow. It runs
// last, on the placed and rewritten entry: an object that a rule drops is never written, and
// an object is privileged by its standalone identity, its target identity or the kind of its
// final body.
func (e Engine) checkPrivileged(w *work) {
	d := w.entry.Disposition
	if e.Policy == nil || (d != routing.Apply && d != routing.Absorbed) {
		return
	}
	src := w.entry.Source
	gr, privileged := src.GroupResource(), IsPrivileged(src.GroupResource())
	if !privileged && d == routing.Apply {
		if t := w.entry.Target.Identity.GroupResource(); IsPrivileged(t) {
			gr, privileged = t, true
		} else if o := w.entry.Object; o != nil {
			if resource, ok := e.Discovery.ResourceForKind(o.GroupVersionKind().GroupKind()); ok {
				if f := (schema.GroupResource{Group: o.GroupVersionKind().Group, Resource: resource}); IsPrivileged(f) {
					gr, privileged = f, true
				}
			}
		}
	}
	what := "it changes what the API server serves or admits"
	if !privileged && d == routing.Apply {
		what, privileged = widens(w.entry.Object)
	}
	if !privileged {
		return
	}
	if why := e.allowsPrivileged(w); why != "" {
		w.reject(RulePrivilegedObject, fmt.Sprintf("%s: %s is privileged (%s) and the policy does not allow it to operator %q: %s",
			src, gr, what, e.Operator, why))
	}
}

// checkRBAC rejects the RBAC mutations of the plan that grant beyond the policy's ceiling. It
// runs last, on the final objects: the rules of the Roles and ClusterRoles and the roleRef of
// the bindings as they will be written, after renaming and every transform. Deletes and
// status writes never grant; patches cannot be checked and are rejected.
func (e Engine) checkRBAC(works []*work) {
	if e.Policy == nil || e.Policy.RBAC == nil {
		return
	}
	written := writtenRoles(works)
	for w, resource := range rbacWrites(works) {
		ceiling := e.Policy.RBAC.For(w.entry.Class)
		if ceiling == nil {
			continue
		}
		action := w.m.Metadata.Action
		var reason string
		switch {
		case !action.CarriesObject() || w.entry.Object == nil:
			reason = fmt.Sprintf("%s: a %s of RBAC cannot be checked against the RBAC ceiling; write the whole object (Apply)", w.entry.Source, action)
		case resource == resourceRoles || resource == resourceClusterRoles:
			reason = ceiling.checkRole(w)
		default:
			reason = ceiling.checkBinding(w, resource, written)
		}
		if reason != "" {
			w.reject(RuleRBACEscalation, reason)
		}
	}
}

// rbacResource returns the RBAC resource an apply entry writes: by the kind of its final
// object when it has one (a transform may change it), else by its target identity.
func rbacResource(w *work) (string, bool) {
	if o := w.entry.Object; o != nil {
		if gvk := o.GroupVersionKind(); gvk.Group == groupRBAC {
			switch gvk.Kind {
			case KindRole:
				return resourceRoles, true
			case KindClusterRole:
				return resourceClusterRoles, true
			case "RoleBinding":
				return resourceRoleBindings, true
			case "ClusterRoleBinding":
				return resourceClusterRoleBindings, true
			}
		}
	}
	t := w.entry.Target.Identity
	if t.Group != groupRBAC || !slices.Contains([]string{resourceRoles, resourceClusterRoles, resourceRoleBindings, resourceClusterRoleBindings}, t.Resource) {
		return "", false
	}
	return t.Resource, true
}

// writtenRole returns the role a mutation writes whole, as it lands on its target, if it does.
func writtenRole(w *work) (RoleRef, bool) {
	t, action := w.entry.Target.Identity, w.m.Metadata.Action
	if w.entry.Disposition != routing.Apply || w.entry.Object == nil || t.Name == "" ||
		!action.CarriesObject() || action.IsStatus() || action == contract.ActionDelete {
		return RoleRef{}, false
	}
	switch resource, _ := rbacResource(w); resource {
	case resourceRoles:
		return RoleRef{Kind: KindRole, Namespace: t.Namespace, Name: t.Name}, true
	case resourceClusterRoles:
		return RoleRef{Kind: KindClusterRole, Name: t.Name}, true
	}
	return RoleRef{}, false
}

// decodeObject decodes the final object of an entry into v.
func decodeObject(w *work, v any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(w.entry.Object.Object, v)
}

// checkRole returns why a Role or ClusterRole grants beyond the ceiling, or "".
func (c *RBACCeiling) checkRole(w *work) string {
	src := w.entry.Source
	var role rbacv1.ClusterRole // a Role is a ClusterRole without aggregationRule
	if err := decodeObject(w, &role); err != nil {
		return fmt.Sprintf("%s: decode: %v", src, err)
	}
	if role.AggregationRule != nil && len(role.AggregationRule.ClusterRoleSelectors) > 0 {
		return fmt.Sprintf("%s: aggregationRule: an aggregated ClusterRole takes the rules of other ClusterRoles, which cannot be checked against the RBAC ceiling", src)
	}
	var problems []string
	for i, r := range role.Rules {
		if !c.AllowWildcards {
			if fields := wildcardFields(r); len(fields) > 0 {
				problems = append(problems, fmt.Sprintf("rules[%d]: grants '*' in %s, and the RBAC ceiling allows no wildcard", i, strings.Join(fields, ", ")))
				continue
			}
		}
		if missing := uncovered(c.Rules, r); len(missing) > 0 {
			problems = append(problems, fmt.Sprintf("rules[%d]: grants %s, beyond the operator's RBAC ceiling", i, strings.Join(missing, ", ")))
		}
	}
	if len(problems) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %s", src, strings.Join(problems, "; "))
}

// checkBinding returns why a RoleBinding or ClusterRoleBinding (resource) grants beyond the
// ceiling, or "". The final roleRef is checked: it must name a role the plan writes (as it
// lands), or a bindable role. A bindable role is named as the operator wrote it: a roleRef
// that only the engine's renaming changed is checked in its standalone form.
func (c *RBACCeiling) checkBinding(w *work, resource string, written map[RoleRef]*work) string {
	src := w.entry.Source
	var b rbacv1.RoleBinding // a ClusterRoleBinding has the same fields
	if err := decodeObject(w, &b); err != nil {
		return fmt.Sprintf("%s: decode: %v", src, err)
	}
	ref, reason := c.roleRef(src, resource, b.RoleRef, w.entry.Target.Identity.Namespace)
	if reason != "" {
		return reason
	}
	if slices.Contains(c.BindableRoles, ref) {
		return ""
	}
	if ref.Kind == KindClusterRole && ref.Name == ClusterAdmin {
		return fmt.Sprintf("%s: roleRef: binds %s, which grants everything, and the RBAC ceiling does not list it as bindable", src, ref)
	}
	if written[ref] != nil {
		return "" // the role is in the plan, and its rules are checked there
	}
	if standalone, ok := standaloneRoleRef(w); ok && !transformed(w.entry.Changes, "/roleRef") {
		if sref, reason := c.roleRef(src, resource, standalone, src.Namespace); reason == "" && slices.Contains(c.BindableRoles, sref) {
			return ""
		}
	}
	return fmt.Sprintf("%s: roleRef: binds %s, which is neither written by this plan nor bindable: its rules cannot be checked against the RBAC ceiling", src, ref)
}

// roleRef validates a binding's roleRef and returns the role it names; namespace is the
// binding's.
func (c *RBACCeiling) roleRef(src contract.Identity, resource string, r rbacv1.RoleRef, namespace string) (RoleRef, string) {
	ref := RoleRef{Kind: r.Kind, Name: r.Name}
	switch ref.Kind {
	case KindRole:
		if resource == resourceClusterRoleBindings {
			return ref, fmt.Sprintf("%s: roleRef.kind: a ClusterRoleBinding refers to a ClusterRole, not a Role", src)
		}
		ref.Namespace = namespace
	case KindClusterRole:
	default:
		return ref, fmt.Sprintf("%s: roleRef.kind: %q is not Role or ClusterRole", src, ref.Kind)
	}
	if r.APIGroup != "" && r.APIGroup != groupRBAC {
		return ref, fmt.Sprintf("%s: roleRef.apiGroup: %q is not %s", src, r.APIGroup, groupRBAC)
	}
	return ref, ""
}

// standaloneRoleRef returns the roleRef of a binding as the operator wrote it.
func standaloneRoleRef(w *work) (rbacv1.RoleRef, bool) {
	if w.src == nil {
		return rbacv1.RoleRef{}, false
	}
	var b rbacv1.RoleBinding
	if runtime.DefaultUnstructuredConverter.FromUnstructured(w.src.Object, &b) != nil {
		return rbacv1.RoleRef{}, false
	}
	return b.RoleRef, true
}

// transformed reports whether a transform changed the field at prefix (a JSON pointer), or a
// field in or above it.
func transformed(changes []Change, prefix string) bool {
	return slices.ContainsFunc(changes, func(c Change) bool {
		return c.Kind == ChangeTransformed &&
			(c.Path == prefix || strings.HasPrefix(c.Path, prefix+"/") || strings.HasPrefix(prefix, c.Path+"/") || c.Path == "")
	})
}

// wildcardFields returns the fields of r that hold a wildcard.
func wildcardFields(r rbacv1.PolicyRule) []string {
	var out []string
	for _, f := range []struct {
		name   string
		values []string
	}{{"verbs", r.Verbs}, {"apiGroups", r.APIGroups}, {"resources", r.Resources}, {"nonResourceURLs", r.NonResourceURLs}} {
		if slices.ContainsFunc(f.values, func(v string) bool { return strings.Contains(v, "*") }) {
			out = append(out, f.name)
		}
	}
	return out
}

// uncovered returns what the granted rule grants that the owner rules do not cover, one
// "verb group/resource[/name]" or "verb URL" per atom, verb by verb in the rule's order.
// Coverage is Kubernetes' own escalation check (validation.Covers): '*' covers everything,
// "*/sub" the subresource sub of every resource, a URL prefix ending in '*' the URLs under it.
func uncovered(owner []rbacv1.PolicyRule, granted rbacv1.PolicyRule) []string {
	ok, missing := validation.Covers(owner, []rbacv1.PolicyRule{granted})
	if ok {
		return nil
	}
	// BreakdownRule lists the atoms group by group; report them verb by verb, as written.
	slices.SortStableFunc(missing, func(a, b rbacv1.PolicyRule) int {
		return slices.Index(granted.Verbs, a.Verbs[0]) - slices.Index(granted.Verbs, b.Verbs[0])
	})
	out := make([]string, 0, len(missing))
	for _, m := range missing {
		verb := m.Verbs[0]
		if len(m.NonResourceURLs) > 0 {
			out = append(out, verb+" "+m.NonResourceURLs[0])
			continue
		}
		atom := verb + " " + schema.GroupResource{Group: m.APIGroups[0], Resource: m.Resources[0]}.String()
		if len(m.ResourceNames) > 0 {
			atom += "/" + m.ResourceNames[0]
		}
		out = append(out, atom)
	}
	return out
}

// writtenRoles returns the roles the plan writes whole, by target identity.
func writtenRoles(works []*work) map[RoleRef]*work {
	roles := map[RoleRef]*work{}
	for _, w := range works {
		if ref, ok := writtenRole(w); ok {
			roles[ref] = w
		}
	}
	return roles
}

// rbacWrites yields the applied writes of RBAC objects that can grant (not deletes, not
// status writes), with their resource.
func rbacWrites(works []*work) iter.Seq2[*work, string] {
	return func(yield func(*work, string) bool) {
		for _, w := range works {
			if w.entry.Disposition != routing.Apply {
				continue
			}
			resource, ok := rbacResource(w)
			if !ok {
				continue
			}
			if action := w.m.Metadata.Action; action == contract.ActionDelete || action.IsStatus() {
				continue
			}
			if !yield(w, resource) {
				return
			}
		}
	}
}
