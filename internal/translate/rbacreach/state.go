package rbacreach

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
)

// Kinds of the RBAC objects a State holds.
const (
	KindRole               = "Role"
	KindClusterRole        = "ClusterRole"
	KindRoleBinding        = "RoleBinding"
	KindClusterRoleBinding = "ClusterRoleBinding"
)

// Ref names an RBAC object of a State.
type Ref struct {
	// Kind is Role, ClusterRole, RoleBinding or ClusterRoleBinding.
	Kind string
	// Namespace is a Role's or RoleBinding's namespace; empty for cluster-scoped kinds.
	Namespace string
	// Name is the object's name.
	Name string
}

// String prints the reference as "Kind namespace/name" or "Kind name".
func (r Ref) String() string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// State is the RBAC objects of one cluster that resolve what its identities may do.
type State struct {
	Roles               []rbacv1.Role
	ClusterRoles        []rbacv1.ClusterRole
	RoleBindings        []rbacv1.RoleBinding
	ClusterRoleBindings []rbacv1.ClusterRoleBinding
}

// Clone returns a copy of s whose lists can be changed (Put, Delete) without changing s's.
// The objects themselves are shared.
func (s State) Clone() State {
	return State{slices.Clone(s.Roles), slices.Clone(s.ClusterRoles), slices.Clone(s.RoleBindings), slices.Clone(s.ClusterRoleBindings)}
}

// Put adds obj (a *rbacv1.Role, *rbacv1.ClusterRole, *rbacv1.RoleBinding or
// *rbacv1.ClusterRoleBinding), replacing the object of its kind, namespace and name.
func (s *State) Put(obj any) error {
	switch o := obj.(type) {
	case *rbacv1.Role:
		s.Roles = put(s.Roles, *o, func(r rbacv1.Role) bool { return r.Namespace == o.Namespace && r.Name == o.Name })
	case *rbacv1.ClusterRole:
		s.ClusterRoles = put(s.ClusterRoles, *o, func(r rbacv1.ClusterRole) bool { return r.Name == o.Name })
	case *rbacv1.RoleBinding:
		s.RoleBindings = put(s.RoleBindings, *o, func(b rbacv1.RoleBinding) bool { return b.Namespace == o.Namespace && b.Name == o.Name })
	case *rbacv1.ClusterRoleBinding:
		s.ClusterRoleBindings = put(s.ClusterRoleBindings, *o, func(b rbacv1.ClusterRoleBinding) bool { return b.Name == o.Name })
	default:
		return fmt.Errorf("put %T: not an RBAC role or binding", obj)
	}
	return nil
}

// Delete removes the object ref names, if s holds it.
func (s *State) Delete(ref Ref) {
	switch ref.Kind {
	case KindRole:
		s.Roles = slices.DeleteFunc(s.Roles, func(r rbacv1.Role) bool { return r.Namespace == ref.Namespace && r.Name == ref.Name })
	case KindClusterRole:
		s.ClusterRoles = slices.DeleteFunc(s.ClusterRoles, func(r rbacv1.ClusterRole) bool { return r.Name == ref.Name })
	case KindRoleBinding:
		s.RoleBindings = slices.DeleteFunc(s.RoleBindings, func(b rbacv1.RoleBinding) bool { return b.Namespace == ref.Namespace && b.Name == ref.Name })
	case KindClusterRoleBinding:
		s.ClusterRoleBindings = slices.DeleteFunc(s.ClusterRoleBindings, func(b rbacv1.ClusterRoleBinding) bool { return b.Name == ref.Name })
	}
}

// Get returns the object ref names (a pointer into s) or nil.
func (s State) Get(ref Ref) any {
	var i int
	switch ref.Kind {
	case KindRole:
		if i = slices.IndexFunc(s.Roles, func(r rbacv1.Role) bool { return r.Namespace == ref.Namespace && r.Name == ref.Name }); i >= 0 {
			return &s.Roles[i]
		}
	case KindClusterRole:
		if i = slices.IndexFunc(s.ClusterRoles, func(r rbacv1.ClusterRole) bool { return r.Name == ref.Name }); i >= 0 {
			return &s.ClusterRoles[i]
		}
	case KindRoleBinding:
		if i = slices.IndexFunc(s.RoleBindings, func(b rbacv1.RoleBinding) bool { return b.Namespace == ref.Namespace && b.Name == ref.Name }); i >= 0 {
			return &s.RoleBindings[i]
		}
	case KindClusterRoleBinding:
		if i = slices.IndexFunc(s.ClusterRoleBindings, func(b rbacv1.ClusterRoleBinding) bool { return b.Name == ref.Name }); i >= 0 {
			return &s.ClusterRoleBindings[i]
		}
	}
	return nil
}

// put replaces the first element of list that same matches with v, or appends v.
func put[T any](list []T, v T, same func(T) bool) []T {
	if i := slices.IndexFunc(list, same); i >= 0 {
		list[i] = v
		return list
	}
	return append(list, v)
}

// FormatRule prints a rule in YAML flow style, as a role's rules are written:
// {verbs: [get], apiGroups: [""], resources: [secrets]}.
func FormatRule(r rbacv1.PolicyRule) string {
	var parts []string
	for _, f := range []struct {
		name   string
		values []string
	}{{"verbs", r.Verbs}, {"apiGroups", r.APIGroups}, {"resources", r.Resources}, {"resourceNames", r.ResourceNames}, {"nonResourceURLs", r.NonResourceURLs}} {
		if len(f.values) == 0 {
			continue
		}
		quoted := make([]string, len(f.values))
		for i, v := range f.values {
			switch v {
			case "":
				quoted[i] = `""`
			case "*":
				quoted[i] = "'*'"
			default:
				quoted[i] = v
			}
		}
		parts = append(parts, f.name+": ["+strings.Join(quoted, ", ")+"]")
	}
	return "{" + strings.Join(parts, ", ") + "}"
}
