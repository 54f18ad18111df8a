package translate

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/routing"
)

// RuleGuestSubjects places on the guest the RoleBindings, ClusterRoleBindings and the Roles
// they bind that the routing table put on the management cluster but whose subjects are
// users or groups: those are the guest's users (the real cluster-authentication-operator
// lets system:authenticated read its serving-cert CA), never the shared management
// cluster's. RBAC lands where its subjects act.
const RuleGuestSubjects = "hosted/rbac-follows-subjects"

// placeGuestSubjects moves to the guest the bindings placed on the management cluster whose
// subjects include a user or a group, and the Roles of the plan they bind.
func (e Engine) placeGuestSubjects(works []*work) {
	type roleKey struct{ namespace, name string }
	moved := map[roleKey]bool{}
	for _, w := range works {
		if !placedOn(w, routing.ClusterManagement) || !isBinding(w.entry.Source) || w.src == nil || !bindsUsersOrGroups(w.tree()) {
			continue
		}
		e.moveToGuest(w, "its subjects are users or groups, who act on the guest")
		if ref := w.tree().Field("roleRef"); ref != nil && yaml.GetValue(ref.Value.Field("kind").Value) == "Role" {
			moved[roleKey{w.entry.Source.Namespace, yaml.GetValue(ref.Value.Field("name").Value)}] = true
		}
	}
	for _, w := range works {
		src := w.entry.Source
		if placedOn(w, routing.ClusterManagement) && src.Group == policy.GroupRBAC && src.Resource == "roles" && moved[roleKey{src.Namespace, src.Name}] {
			e.moveToGuest(w, "a binding of users or groups on the guest refers to it")
		}
	}
}

func placedOn(w *work, cluster string) bool {
	return w.entry.Disposition == routing.Apply && w.entry.Target.Cluster == cluster
}

func isBinding(id contract.Identity) bool {
	return id.Group == policy.GroupRBAC && (id.Resource == "rolebindings" || id.Resource == "clusterrolebindings")
}

// bindingSubjects returns the elements of a binding's subjects: none when the field is
// absent or not a list.
func bindingSubjects(obj *yaml.RNode) []*yaml.RNode {
	subjects := obj.Field("subjects")
	if subjects == nil {
		return nil
	}
	elems, err := subjects.Value.Elements()
	if err != nil {
		return nil
	}
	return elems
}

// bindsUsersOrGroups reports whether a binding's subjects include a User or a Group.
func bindsUsersOrGroups(obj *yaml.RNode) bool {
	for _, s := range bindingSubjects(obj) {
		if k := s.Field("kind"); k != nil {
			if kind := yaml.GetValue(k.Value); kind == "User" || kind == "Group" {
				return true
			}
		}
	}
	return false
}

// moveToGuest places w on the guest under its standalone identity.
func (e Engine) moveToGuest(w *work, why string) {
	target, err := e.Names.ToTarget(routing.ClusterGuest, w.entry.Source)
	if err != nil {
		w.reject(plans.RuleNameMapping, err.Error())
		return
	}
	w.entry.Target = plans.Target{Cluster: routing.ClusterGuest, Identity: target}
	w.entry.Rule = RuleGuestSubjects
	w.entry.Reason = fmt.Sprintf("placed on the guest instead of the management cluster: %s", why)
}
