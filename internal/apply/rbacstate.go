package apply

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/internal/translate/rbacreach"
	"github.com/topolayer/topolayer/routing"
)

// RBACReader is a Target that can read the RBAC its cluster holds, so that a plan is checked
// against the RBAC the cluster will hold after it, not its own alone. ClusterTarget is one.
type RBACReader interface {
	// RBAC returns the cluster's Roles, ClusterRoles, RoleBindings and ClusterRoleBindings.
	RBAC(ctx context.Context) (rbacreach.State, error)
}

var _ RBACReader = (*ClusterTarget)(nil)

// rbacKinds are the RBAC resources a plan's writes to are judged on the union, by resource.
var rbacKinds = map[string]string{
	"roles":               rbacreach.KindRole,
	"clusterroles":        rbacreach.KindClusterRole,
	"rolebindings":        rbacreach.KindRoleBinding,
	"clusterrolebindings": rbacreach.KindClusterRoleBinding,
}

// RBAC implements RBACReader with the target's client (as the identity it writes): four list
// requests, each across every namespace.
func (t *ClusterTarget) RBAC(ctx context.Context) (rbacreach.State, error) {
	var s rbacreach.State
	lists := []struct {
		resource string
		into     any
	}{
		{"roles", &rbacv1.RoleList{}},
		{"clusterroles", &rbacv1.ClusterRoleList{}},
		{"rolebindings", &rbacv1.RoleBindingList{}},
		{"clusterrolebindings", &rbacv1.ClusterRoleBindingList{}},
	}
	for _, l := range lists {
		gvr := schema.GroupVersionResource{Group: rbacv1.GroupName, Version: "v1", Resource: l.resource}
		items, err := t.client.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			return s, fmt.Errorf("list %s: %w", l.resource, err)
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(items.UnstructuredContent(), l.into); err != nil {
			return s, fmt.Errorf("list %s: %w", l.resource, err)
		}
	}
	s.Roles = lists[0].into.(*rbacv1.RoleList).Items
	s.ClusterRoles = lists[1].into.(*rbacv1.ClusterRoleList).Items
	s.RoleBindings = lists[2].into.(*rbacv1.RoleBindingList).Items
	s.ClusterRoleBindings = lists[3].into.(*rbacv1.ClusterRoleBindingList).Items
	return s, nil
}

// checkLiveRBAC refuses a plan that lets a broad subject (rbacreach.PrincipalOf: every
// authenticated or unauthenticated identity, every service account, those of a namespace, a
// namespace's default service account) do what it cannot do today, on the RBAC the cluster
// will hold: what it holds (RBACReader, read once per cluster the plan writes RBAC to) with
// the plan's writes laid over it, resolved as the RBAC authorizer resolves it (aggregated
// ClusterRoles included). So a role written by an earlier run and bound to a broad subject
// cannot be widened, a live role cannot be bound to one, and a role labelled for a live
// aggregated role cannot widen what that role's subjects hold.
//
// A grant the plan writes whole is judged by the plan's own containment
// (policy/rbac-containment): a binding of the plan that binds a broad subject
// (policy.BroadSubject) to a role of the same plan that is not aggregated, or to a role
// the RBAC ceiling lists as bindable, gives what it gives. A Patch of an RBAC object cannot
// be judged on the union and is refused. The shared management cluster holds no binding of
// topolayer's to a user or group and is not read; nor is a cluster whose RBAC entries all
// change nothing (unchanged, by entry index: the target found the object already as written).
func checkLiveRBAC(ctx context.Context, plan *plans.Plan, targets map[string]Target, unchanged map[int]bool) error {
	byCluster := map[string][]int{}
	changes := map[string]bool{}
	for _, i := range applyEntries(plan) {
		e := plan.Entries[i]
		id := e.Mutation.Identity()
		if e.Target.Cluster == routing.ClusterManagement || e.Mutation.Metadata.Action.IsStatus() || id.Group != rbacv1.GroupName || rbacKinds[id.Resource] == "" {
			continue
		}
		byCluster[e.Target.Cluster] = append(byCluster[e.Target.Cluster], i)
		changes[e.Target.Cluster] = changes[e.Target.Cluster] || !unchanged[i]
	}
	var errs []error
	for _, cluster := range slices.Sorted(maps.Keys(byCluster)) {
		reader, ok := targets[cluster].(RBACReader)
		if !ok || !changes[cluster] {
			continue
		}
		live, err := reader.RBAC(ctx)
		if err != nil {
			return fmt.Errorf("the RBAC the %s cluster holds: %w", cluster, err)
		}
		after, written, err := overlayRBAC(plan, byCluster[cluster], live)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		vouched := func(g rbacreach.Grant) bool {
			b, ok := written[g.Binding]
			if !ok || !policy.BroadSubject(g.Subject) {
				return false
			}
			if _, ok := written[g.Role]; ok && !g.Aggregated {
				return true
			}
			ceiling := plan.RBAC.For(plan.Entries[b].Class)
			return ceiling != nil && slices.Contains(ceiling.BindableRoles, policy.RoleRef{Kind: g.Role.Kind, Namespace: g.Role.Namespace, Name: g.Role.Name})
		}
		for _, w := range rbacreach.Widenings(live, after, vouched) {
			errs = append(errs, wideningError(plan, cluster, w, written))
		}
	}
	return errors.Join(errs...)
}

// overlayRBAC returns live with the RBAC writes of the plan's entries laid over it, in
// order (Create, Update and Apply replace, Delete removes), and the entry that wrote each
// object. A Patch is refused: the patched object is the server's to compute.
func overlayRBAC(plan *plans.Plan, entries []int, live rbacreach.State) (rbacreach.State, map[rbacreach.Ref]int, error) {
	after := live.Clone()
	written := map[rbacreach.Ref]int{}
	var errs []error
	for _, i := range entries {
		e := plan.Entries[i]
		id := e.Target.Identity
		ref := rbacreach.Ref{Kind: rbacKinds[id.Resource], Namespace: id.Namespace, Name: id.Name}
		action := e.Mutation.Metadata.Action
		switch {
		case action == contract.ActionDelete:
			after.Delete(ref)
			continue
		case !action.CarriesObject() || e.Object == nil:
			errs = append(errs, fmt.Errorf("entry %d: %s: %s: a %s of %s cannot be judged against the RBAC the %s cluster holds; write the whole object (Apply)",
				i, e.Source, policy.RuleRBACContainment, action, ref, e.Target.Cluster))
			continue
		}
		obj, err := decodeRBAC(ref, e.Object.Object)
		if err != nil {
			errs = append(errs, fmt.Errorf("entry %d: %s: decode %s: %w", i, e.Source, ref, err))
			continue
		}
		if cr, ok := obj.(*rbacv1.ClusterRole); ok && action == contract.ActionApply {
			// Server-side apply keeps the labels other managers set, which aggregation reads.
			if held, ok := after.Get(ref).(*rbacv1.ClusterRole); ok {
				for k, v := range held.Labels {
					if _, set := cr.Labels[k]; !set {
						if cr.Labels == nil {
							cr.Labels = map[string]string{}
						}
						cr.Labels[k] = v
					}
				}
			}
		}
		if err := after.Put(obj); err != nil {
			errs = append(errs, fmt.Errorf("entry %d: %s: %w", i, e.Source, err))
			continue
		}
		written[ref] = i
	}
	return after, written, errors.Join(errs...)
}

// decodeRBAC decodes an RBAC object of the kind ref names, named as ref names it.
func decodeRBAC(ref rbacreach.Ref, u map[string]any) (any, error) {
	var obj interface {
		SetName(string)
		SetNamespace(string)
	}
	switch ref.Kind {
	case rbacreach.KindRole:
		obj = &rbacv1.Role{}
	case rbacreach.KindClusterRole:
		obj = &rbacv1.ClusterRole{}
	case rbacreach.KindRoleBinding:
		obj = &rbacv1.RoleBinding{}
	default:
		obj = &rbacv1.ClusterRoleBinding{}
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u, obj); err != nil {
		return nil, err
	}
	obj.SetName(ref.Name)
	obj.SetNamespace(ref.Namespace)
	return obj, nil
}

// wideningError says what a broad subject would gain, where, through which binding and
// role, and which entry of the plan causes it (the binding's, the role's, or the ClusterRole
// an aggregated role takes the rule from).
func wideningError(plan *plans.Plan, cluster string, w rbacreach.Widening, written map[rbacreach.Ref]int) error {
	held := func(ref rbacreach.Ref) string {
		if i, ok := written[ref]; ok {
			return fmt.Sprintf("%s (entry %d of this plan)", ref, i)
		}
		return fmt.Sprintf("%s (held by the cluster)", ref)
	}
	where := "cluster-wide"
	if w.Namespace != "" {
		where = "in namespace " + w.Namespace
	}
	msg := fmt.Sprintf("%s: on the %s cluster, %s would gain %s %s, which it cannot do today: %s binds %s %s to %s",
		policy.RuleRBACContainment, cluster, w.Principal.Name, rbacreach.FormatRule(w.Rule), where,
		held(w.Grant.Binding), w.Grant.Subject.Kind, w.Grant.Subject.Name, held(w.Grant.Role))
	causes := []rbacreach.Ref{w.Grant.Binding, w.Grant.Role}
	if w.From != nil {
		msg += ", which aggregates it from " + held(*w.From)
		causes = append(causes, *w.From)
	}
	for _, ref := range causes {
		if i, ok := written[ref]; ok {
			return fmt.Errorf("entry %d: %s: %s", i, plan.Entries[i].Source, msg)
		}
	}
	return errors.New(msg)
}
