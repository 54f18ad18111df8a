// Package rbacreach resolves what RBAC lets a class of identities do, as the Kubernetes RBAC
// authorizer resolves it, over RBAC objects held in memory, and finds what a change to those
// objects lets a broad class do that it could not before.
//
// A State is the Roles, ClusterRoles and their bindings of one cluster. Rules are resolved
// per subject as the authorizer does: a binding applies to an identity when one of its
// subjects names its user, one of its groups or its service account; a RoleBinding grants
// its role's rules in its own namespace only; an aggregated ClusterRole holds the rules of
// the ClusterRoles its aggregationRule selects (what the API server's aggregation
// controller writes). Coverage is k8s.io/component-helpers' (validation.Covers).
//
//	after := live.Clone()
//	_ = after.Put(planned) // a *rbacv1.ClusterRole the plan writes
//	for _, w := range rbacreach.Widenings(live, after, nil) {
//		// refused: w.Principal would gain w.Rule through w.Grant
//	}
package rbacreach
