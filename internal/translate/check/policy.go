package check

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
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/routing"
)

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
	case gvk.Group == policy.GroupRBAC && gvk.Kind == "ClusterRole":
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
func (e *Checker) allowsPrivileged(w Write) string {
	o := routingObject(w)
	if !slices.ContainsFunc(e.Policy.Privileged, func(m routing.Match) bool { return m.Matches(o) }) {
		return "the configuration does not list it (policy.operators[].privileged); an operator's own declarations are not enough"
	}
	if e.Declared == nil && w.Entry().DeclaredBy == "" && !(e.Supplement != nil && e.Supplement.ForClass(o.Class).Matches(o.Identity)) {
		return "the operator has no output-resources: without declarations no privileged object is written"
	}
	return ""
}

// checkPrivileged rejects a write to a privileged object the policy does not allow. It runs
// last, on the placed and rewritten entry: an object that a rule drops is never written, and
// an object is privileged by its standalone identity, its target identity or the kind of its
// final body.
func (e *Checker) checkPrivileged(w Write) {
	d := w.Entry().Disposition
	if e.Policy == nil || (d != routing.Apply && d != routing.Absorbed) {
		return
	}
	src := w.Entry().Source
	gr, privileged := src.GroupResource(), policy.IsPrivileged(src.GroupResource())
	if !privileged && d == routing.Apply {
		if t := w.Entry().Target.Identity.GroupResource(); policy.IsPrivileged(t) {
			gr, privileged = t, true
		} else if o := w.Entry().Object; o != nil {
			if resource, ok := e.Discovery.ResourceForKind(o.GroupVersionKind().GroupKind()); ok {
				if f := (schema.GroupResource{Group: o.GroupVersionKind().Group, Resource: resource}); policy.IsPrivileged(f) {
					gr, privileged = f, true
				}
			}
		}
	}
	what := "it changes what the API server serves or admits"
	if !privileged && d == routing.Apply {
		what, privileged = widens(w.Entry().Object)
	}
	if !privileged {
		return
	}
	if why := e.allowsPrivileged(w); why != "" {
		w.Reject(policy.RulePrivilegedObject, fmt.Sprintf("%s: %s is privileged (%s) and the policy does not allow it to operator %q: %s",
			src, gr, what, e.Operator, why))
	}
}

// checkRBAC rejects the RBAC mutations of the plan that grant beyond the policy's ceiling. It
// runs last, on the final objects: the rules of the Roles and ClusterRoles and the roleRef of
// the bindings as they will be written, after renaming and every transform. Deletes and
// status writes never grant; patches cannot be checked and are rejected.
func (e *Checker) checkRBAC(works []Write) {
	if e.Policy == nil || e.Policy.RBAC == nil {
		return
	}
	written := WrittenRoles(works)
	for w, resource := range rbacWrites(works) {
		ceiling := e.Policy.RBAC.For(w.Entry().Class)
		if ceiling == nil {
			continue
		}
		action := w.Mutation().Metadata.Action
		var reason string
		switch {
		case !action.CarriesObject() || w.Entry().Object == nil:
			reason = fmt.Sprintf("%s: a %s of RBAC cannot be checked against the RBAC ceiling; write the whole object (Apply)", w.Entry().Source, action)
		case resource == policy.ResourceRoles || resource == policy.ResourceClusterRoles:
			reason = checkRole(ceiling, w)
		default:
			reason = checkBinding(ceiling, w, resource, written)
		}
		if reason != "" {
			w.Reject(policy.RuleRBACEscalation, reason)
		}
	}
}

// rbacResource returns the RBAC resource an apply entry writes: by the kind of its final
// object when it has one (a transform may change it), else by its target identity.
func rbacResource(w Write) (string, bool) {
	if o := w.Entry().Object; o != nil {
		if gvk := o.GroupVersionKind(); gvk.Group == policy.GroupRBAC {
			switch gvk.Kind {
			case policy.KindRole:
				return policy.ResourceRoles, true
			case policy.KindClusterRole:
				return policy.ResourceClusterRoles, true
			case "RoleBinding":
				return policy.ResourceRoleBindings, true
			case "ClusterRoleBinding":
				return policy.ResourceClusterRoleBindings, true
			}
		}
	}
	t := w.Entry().Target.Identity
	if t.Group != policy.GroupRBAC || !slices.Contains([]string{policy.ResourceRoles, policy.ResourceClusterRoles, policy.ResourceRoleBindings, policy.ResourceClusterRoleBindings}, t.Resource) {
		return "", false
	}
	return t.Resource, true
}

// WrittenRole returns the role a mutation writes whole, as it lands on its target, if it does.
func WrittenRole(w Write) (policy.RoleRef, bool) {
	t, action := w.Entry().Target.Identity, w.Mutation().Metadata.Action
	if w.Entry().Disposition != routing.Apply || w.Entry().Object == nil || t.Name == "" ||
		!action.CarriesObject() || action.IsStatus() || action == contract.ActionDelete {
		return policy.RoleRef{}, false
	}
	switch resource, _ := rbacResource(w); resource {
	case policy.ResourceRoles:
		return policy.RoleRef{Kind: policy.KindRole, Namespace: t.Namespace, Name: t.Name}, true
	case policy.ResourceClusterRoles:
		return policy.RoleRef{Kind: policy.KindClusterRole, Name: t.Name}, true
	}
	return policy.RoleRef{}, false
}

// decodeObject decodes the final object of an entry into v.
func decodeObject(w Write, v any) error {
	return runtime.DefaultUnstructuredConverter.FromUnstructured(w.Entry().Object.Object, v)
}

// checkRole returns why a Role or ClusterRole grants beyond the ceiling, or "".
func checkRole(c *policy.RBACCeiling, w Write) string {
	src := w.Entry().Source
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
func checkBinding(c *policy.RBACCeiling, w Write, resource string, written map[policy.RoleRef]Write) string {
	src := w.Entry().Source
	var b rbacv1.RoleBinding // a ClusterRoleBinding has the same fields
	if err := decodeObject(w, &b); err != nil {
		return fmt.Sprintf("%s: decode: %v", src, err)
	}
	ref, reason := roleRef(c, src, resource, b.RoleRef, w.Entry().Target.Identity.Namespace)
	if reason != "" {
		return reason
	}
	if slices.Contains(c.BindableRoles, ref) {
		return ""
	}
	if ref.Kind == policy.KindClusterRole && ref.Name == policy.ClusterAdmin {
		return fmt.Sprintf("%s: roleRef: binds %s, which grants everything, and the RBAC ceiling does not list it as bindable", src, ref)
	}
	if written[ref] != nil {
		return "" // the role is in the plan, and its rules are checked there
	}
	if standalone, ok := standaloneRoleRef(w); ok && !transformed(w.Entry().Changes, "/roleRef") {
		if sref, reason := roleRef(c, src, resource, standalone, src.Namespace); reason == "" && slices.Contains(c.BindableRoles, sref) {
			return ""
		}
	}
	return fmt.Sprintf("%s: roleRef: binds %s, which is neither written by this plan nor bindable: its rules cannot be checked against the RBAC ceiling", src, ref)
}

// roleRef validates a binding's roleRef and returns the role it names; namespace is the
// binding's.
func roleRef(c *policy.RBACCeiling, src contract.Identity, resource string, r rbacv1.RoleRef, namespace string) (policy.RoleRef, string) {
	ref := policy.RoleRef{Kind: r.Kind, Name: r.Name}
	switch ref.Kind {
	case policy.KindRole:
		if resource == policy.ResourceClusterRoleBindings {
			return ref, fmt.Sprintf("%s: roleRef.kind: a ClusterRoleBinding refers to a ClusterRole, not a Role", src)
		}
		ref.Namespace = namespace
	case policy.KindClusterRole:
	default:
		return ref, fmt.Sprintf("%s: roleRef.kind: %q is not Role or ClusterRole", src, ref.Kind)
	}
	if r.APIGroup != "" && r.APIGroup != policy.GroupRBAC {
		return ref, fmt.Sprintf("%s: roleRef.apiGroup: %q is not %s", src, r.APIGroup, policy.GroupRBAC)
	}
	return ref, ""
}

// standaloneRoleRef returns the roleRef of a binding as the operator wrote it.
func standaloneRoleRef(w Write) (rbacv1.RoleRef, bool) {
	if w.Source() == nil {
		return rbacv1.RoleRef{}, false
	}
	var b rbacv1.RoleBinding
	if runtime.DefaultUnstructuredConverter.FromUnstructured(w.Source().Object, &b) != nil {
		return rbacv1.RoleRef{}, false
	}
	return b.RoleRef, true
}

// transformed reports whether a transform changed the field at prefix (a JSON pointer), or a
// field in or above it.
func transformed(changes []plans.Change, prefix string) bool {
	return slices.ContainsFunc(changes, func(c plans.Change) bool {
		return c.Kind == plans.ChangeTransformed &&
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

// WrittenRoles returns the roles the plan writes whole, by target identity.
func WrittenRoles(works []Write) map[policy.RoleRef]Write {
	roles := map[policy.RoleRef]Write{}
	for _, w := range works {
		if ref, ok := WrittenRole(w); ok {
			roles[ref] = w
		}
	}
	return roles
}

// rbacWrites yields the applied writes of RBAC objects that can grant (not deletes, not
// status writes), with their resource.
func rbacWrites(works []Write) iter.Seq2[Write, string] {
	return func(yield func(Write, string) bool) {
		for _, w := range works {
			if w.Entry().Disposition != routing.Apply {
				continue
			}
			resource, ok := rbacResource(w)
			if !ok {
				continue
			}
			if action := w.Mutation().Metadata.Action; action == contract.ActionDelete || action.IsStatus() {
				continue
			}
			if !yield(w, resource) {
				return
			}
		}
	}
}
