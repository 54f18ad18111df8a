package policy

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
)

// RuleRBACContainment rejects RBAC that reaches beyond the operator, whatever its ceiling: on
// the shared management cluster, cluster-scoped RBAC and bindings to users and groups (every
// tenant's users share it); on either cluster, a broad subject bound to a role that grants
// everything, wildcards, the escalate, bind or impersonate verbs, reading secrets or a way
// into pods, nodes or other accounts' tokens; and cluster-admin bound to a named user or a
// default service account unless the ceiling lists it as bindable. When a plan is applied,
// the same rule refuses, on the union of what the cluster holds and what the plan writes, a
// broad subject or a namespace's default service account that would gain what it cannot do
// today (package apply, with translate/rbacreach).
const RuleRBACContainment = "policy/rbac-containment"

// broadUsers are the users that stand for many principals; every group is broad.
var broadUsers = []string{"system:anonymous", "system:unauthenticated", "system:authenticated", "system:masters"}

// BroadSubject reports whether a binding subject stands for more than one identity: any
// group, and the users that stand for many (system:anonymous, system:authenticated, ...).
func BroadSubject(s rbacv1.Subject) bool {
	return s.Kind == rbacv1.GroupKind || (s.Kind == rbacv1.UserKind && slices.Contains(broadUsers, s.Name))
}
