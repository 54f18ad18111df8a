package check

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/routing"
)

// escalatingVerbs grant more than the verbs' holder has.
var escalatingVerbs = []string{"escalate", "bind", "impersonate", "*"}

// sensitiveResources are what no broad subject may reach: the secrets of a namespace (read),
// and a way into pods, nodes or another account's credentials.
var sensitiveResources = []struct {
	group, resource string
	verbs           []string
}{
	{"", "secrets", []string{"get", "list", "watch"}},
	{"", "pods/exec", []string{"create", "get"}},
	{"", "pods/attach", []string{"create", "get"}},
	{"", "pods/portforward", []string{"create", "get"}},
	{"", "serviceaccounts/token", []string{"create"}},
	{"", "nodes/proxy", []string{"create", "get"}},
}

// dangerousRules returns why rules grant beyond what a broad subject may hold, or "".
func dangerousRules(rules []rbacv1.PolicyRule) string {
	for i, r := range rules {
		if fields := wildcardFields(r); len(fields) > 0 {
			return fmt.Sprintf("rules[%d] grants '*' in %s", i, strings.Join(fields, ", "))
		}
		for _, v := range r.Verbs {
			if slices.Contains(escalatingVerbs, v) {
				return fmt.Sprintf("rules[%d] grants %s", i, v)
			}
		}
		for _, s := range sensitiveResources {
			if slices.Contains(r.APIGroups, s.group) && slices.Contains(r.Resources, s.resource) && slices.ContainsFunc(r.Verbs, func(v string) bool { return slices.Contains(s.verbs, v) }) {
				return fmt.Sprintf("rules[%d] grants %s on %s", i, strings.Join(r.Verbs, ","), s.resource)
			}
		}
	}
	return ""
}

// checkRBACContainment applies the default RBAC containment to the final objects. Without a
// ceiling, a broad subject may be bound only to a role the plan writes whose rules grant no
// wildcard and none of escalate, bind and impersonate. A configured ceiling widens it for the
// classes it applies to (RBACCeiling.Classes): the roles it lists as bindable, and the roles
// of the plan whose rules it covers, may be bound to broad subjects. Nothing widens the
// management cluster's: no cluster-scoped RBAC and no user or group subject there. roles are
// the roles the plan writes (writtenRoles).
func (e *Checker) checkRBACContainment(works []Write, roles map[policy.RoleRef]Write) {
	if e.Policy == nil {
		return
	}
	for w, resource := range rbacWrites(works) {
		action := w.Mutation().Metadata.Action
		src, management := w.Entry().Source, w.Entry().Target.Cluster == routing.ClusterManagement
		var reason string
		switch {
		case management && (resource == policy.ResourceClusterRoles || resource == policy.ResourceClusterRoleBindings):
			reason = fmt.Sprintf("%s: a cluster-scoped %s on the shared management cluster would reach every tenant's hosted control plane", src, resource)
		case resource == policy.ResourceRoles || resource == policy.ResourceClusterRoles:
		case !action.CarriesObject() || w.Entry().Object == nil:
			reason = fmt.Sprintf("%s: a %s of a binding cannot be checked for its subjects; write the whole object (Apply)", src, action)
		default:
			reason = e.checkBindingContainment(w, resource, management, roles)
		}
		if reason != "" {
			w.Reject(policy.RuleRBACContainment, reason)
		}
	}
}

// checkBindingContainment returns why a binding is beyond containment, or "".
func (e *Checker) checkBindingContainment(w Write, resource string, management bool, roles map[policy.RoleRef]Write) string {
	src := w.Entry().Source
	var b rbacv1.RoleBinding
	if err := decodeObject(w, &b); err != nil {
		return fmt.Sprintf("%s: decode: %v", src, err)
	}
	ceiling := e.Policy.RBAC.For(w.Entry().Class)
	adminBindable := ceiling != nil && slices.Contains(ceiling.BindableRoles, policy.RoleRef{Kind: policy.KindClusterRole, Name: policy.ClusterAdmin})
	var broad []string
	for i, s := range b.Subjects {
		if management && (s.Kind == rbacv1.UserKind || s.Kind == rbacv1.GroupKind) {
			return fmt.Sprintf("%s: subjects[%d]: binds %s %q on the shared management cluster, whose users and groups are not the guest's: only service accounts may be bound there", src, i, s.Kind, s.Name)
		}
		if policy.BroadSubject(s) {
			broad = append(broad, fmt.Sprintf("subjects[%d] (%s %s)", i, s.Kind, s.Name))
			continue
		}
		// A person, or every pod of a namespace that names no account, with everything.
		if b.RoleRef.Kind == policy.KindClusterRole && b.RoleRef.Name == policy.ClusterAdmin && !adminBindable &&
			(s.Kind == rbacv1.UserKind || s.Kind == rbacv1.ServiceAccountKind && s.Name == "default") {
			return fmt.Sprintf("%s: subjects[%d]: binds %s %q to ClusterRole %s: a named user or a namespace's default service account with everything; the RBAC ceiling can list cluster-admin as bindable (policy.operators[].rbacCeiling.bindableRoles)",
				src, i, s.Kind, s.Name, policy.ClusterAdmin)
		}
	}
	if len(broad) == 0 {
		return ""
	}
	ref := policy.RoleRef{Kind: b.RoleRef.Kind, Name: b.RoleRef.Name}
	if ref.Kind == policy.KindRole {
		ref.Namespace = w.Entry().Target.Identity.Namespace
	}
	if ceiling != nil && slices.Contains(ceiling.BindableRoles, ref) {
		return ""
	}
	why := ""
	rw, written := roles[ref]
	switch {
	case ref.Kind == policy.KindClusterRole && ref.Name == policy.ClusterAdmin:
		why = "which grants everything"
	case !written:
		// A role the plan does not write is a live cluster's (admin and edit grant
		// impersonate): offline its rules cannot be read, so only the ceiling can vouch for it.
		why = "which this plan does not write and the RBAC ceiling does not list as bindable: its rules cannot be checked"
	default:
		var role rbacv1.ClusterRole
		if err := decodeObject(rw, &role); err != nil {
			return fmt.Sprintf("%s: roleRef: decode %s: %v", src, ref, err)
		}
		if role.AggregationRule != nil && len(role.AggregationRule.ClusterRoleSelectors) > 0 {
			why = "an aggregated role, whose rules cannot be checked"
		} else if d := dangerousRules(role.Rules); d != "" {
			why = "whose " + d
		}
		if why != "" && ceiling != nil && rw.Entry().Disposition == routing.Apply && checkRole(ceiling, rw) == "" && (ceiling.AllowWildcards || !strings.Contains(why, "'*'")) {
			why = "" // the ceiling vouches for the role's rules
		}
	}
	if why == "" {
		return ""
	}
	return fmt.Sprintf("%s: binds the broad %s to %s, %s", src, strings.Join(broad, ", "), ref, why)
}
