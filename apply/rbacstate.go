package apply

import (
	"context"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/translate"
)

// BindingLister is a Target that can list the bindings its cluster holds to a role, so that
// a plan is checked against the RBAC the cluster will hold after it, not its own alone.
// ClusterTarget is one.
type BindingLister interface {
	// BindingsTo returns the RoleBindings (a Role's namespace; namespace "" for every
	// namespace, with a ClusterRole) and ClusterRoleBindings that refer to the role.
	BindingsTo(ctx context.Context, role translate.RoleRef) ([]rbacv1.RoleBinding, error)
}

var (
	roleBindingsGVR        = schema.GroupVersionResource{Group: rbacv1.GroupName, Version: "v1", Resource: "rolebindings"}
	clusterRoleBindingsGVR = schema.GroupVersionResource{Group: rbacv1.GroupName, Version: "v1", Resource: "clusterrolebindings"}
)

// BindingsTo implements BindingLister with the target's client (as the identity it writes).
func (t *ClusterTarget) BindingsTo(ctx context.Context, role translate.RoleRef) ([]rbacv1.RoleBinding, error) {
	type list struct {
		gvr       schema.GroupVersionResource
		namespace string
	}
	lists := []list{{roleBindingsGVR, role.Namespace}}
	if role.Kind == translate.KindClusterRole {
		lists = append(lists, list{clusterRoleBindingsGVR, ""})
	}
	var out []rbacv1.RoleBinding
	for _, l := range lists {
		items, err := t.client.Resource(l.gvr).Namespace(l.namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", l.gvr.Resource, err)
		}
		for _, item := range items.Items {
			var b rbacv1.RoleBinding // a ClusterRoleBinding has the same roleRef and subjects
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(item.Object, &b); err != nil {
				return nil, fmt.Errorf("%s %s/%s: %w", l.gvr.Resource, item.GetNamespace(), item.GetName(), err)
			}
			if b.RoleRef.Kind == role.Kind && b.RoleRef.Name == role.Name {
				out = append(out, b)
			}
		}
	}
	return out, nil
}

// checkLiveRBAC refuses a plan that, with what the cluster already holds, lets a broad
// subject do what containment forbids: the plan writes a Role or ClusterRole whose rules go
// beyond what a broad subject may hold (translate.BeyondBroadSubjects), and a binding the
// cluster holds (written by an earlier run, or by anyone) binds a broad subject to it. Each
// plan is contained on its own (policy/rbac-containment); this is the pair across runs: a
// harmless role bound to system:authenticated in one run, widened in the next. The shared
// management cluster holds no such binding of topolayer's (no user or group is bound there)
// and is not listed.
func checkLiveRBAC(ctx context.Context, plan *translate.Plan, targets map[string]Target) error {
	var errs []string
	for _, i := range applyEntries(plan) {
		e := plan.Entries[i]
		if e.Target.Cluster == routing.ClusterManagement || e.Object == nil || e.Mutation.Metadata.Action.IsStatus() {
			continue
		}
		gvk := e.Object.GroupVersionKind()
		if gvk.Group != rbacv1.GroupName || (gvk.Kind != "Role" && gvk.Kind != "ClusterRole") {
			continue
		}
		lister, ok := targets[e.Target.Cluster].(BindingLister)
		if !ok {
			continue
		}
		var role rbacv1.ClusterRole // a Role is a ClusterRole without aggregationRule
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(e.Object.Object, &role); err != nil {
			return fmt.Errorf("entry %d: %s: decode: %w", i, e.Source, err)
		}
		why := translate.BeyondBroadSubjects(role.Rules)
		if why == "" {
			continue
		}
		ref := translate.RoleRef{Kind: gvk.Kind, Name: e.Target.Identity.Name}
		if gvk.Kind == "Role" {
			ref.Namespace = e.Target.Identity.Namespace
		}
		bindings, err := lister.BindingsTo(ctx, ref)
		if err != nil {
			return fmt.Errorf("entry %d: %s: the bindings the %s cluster holds to %s: %w", i, e.Source, e.Target.Cluster, ref, err)
		}
		for _, b := range bindings {
			for j, s := range b.Subjects {
				if translate.BroadSubject(s) {
					errs = append(errs, fmt.Sprintf("entry %d: %s: %s: %s, and %s/%s on the %s cluster binds subjects[%d] (%s %s) to it: the broad subject would get it",
						i, e.Source, translate.RuleRBACContainment, why, b.Namespace, b.Name, e.Target.Cluster, j, s.Kind, s.Name))
				}
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}
