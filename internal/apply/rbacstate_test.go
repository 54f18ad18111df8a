package apply

import (
	"context"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/internal/translate/rbacreach"
	"github.com/topolayer/topolayer/routing"
)

// rbacTarget is a fakeTarget that holds RBAC and counts its reads.
type rbacTarget struct {
	fakeTarget
	state rbacreach.State
	reads int
}

func (f *rbacTarget) RBAC(context.Context) (rbacreach.State, error) {
	f.reads++
	return f.state, nil
}

// rbacEntry is an apply entry of the guest writing the RBAC object y (its kind, namespace
// and name are read from it) with action.
func rbacEntry(t *testing.T, cluster string, action contract.Action, y string) plans.Entry {
	t.Helper()
	o := obj(t, y)
	resource := map[string]string{"Role": "roles", "ClusterRole": "clusterroles", "RoleBinding": "rolebindings", "ClusterRoleBinding": "clusterrolebindings"}[o.GetKind()]
	md := contract.Metadata{Action: action, Namespace: o.GetNamespace(), Name: o.GetName(),
		ResourceType: contract.ResourceType{Group: rbacv1.GroupName, Version: "v1", Resource: resource}}
	m := &contract.Mutation{Metadata: md, Body: []byte(y)}
	e := plans.Entry{Action: action, Class: contract.ClassUserWorkload, Disposition: routing.Apply, Source: m.Identity(),
		Target: plans.Target{Cluster: cluster, Identity: m.Identity()}, Mutation: m}
	if action.CarriesObject() {
		e.Object = o
	}
	return e
}

func TestCheckLiveRBAC(t *testing.T) {
	rule := func(verbs, resources string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{Verbs: strings.Split(verbs, ","), APIGroups: []string{""}, Resources: strings.Split(resources, ",")}
	}
	everyone := []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: "system:authenticated"}}
	ref := func(kind, name string) rbacv1.RoleRef {
		return rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: kind, Name: name}
	}
	// The guest: system:authenticated reads configmaps in default through a Role an earlier
	// run wrote, and every pod's views aggregate what is labelled for them.
	live := rbacreach.State{
		Roles:        []rbacv1.Role{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "reader"}, Rules: []rbacv1.PolicyRule{rule("get", "configmaps")}}},
		RoleBindings: []rbacv1.RoleBinding{{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "everyone"}, RoleRef: ref("Role", "reader"), Subjects: everyone}},
		ClusterRoles: []rbacv1.ClusterRole{
			{ObjectMeta: metav1.ObjectMeta{Name: "secret-reader"}, Rules: []rbacv1.PolicyRule{rule("get", "secrets")}},
			{ObjectMeta: metav1.ObjectMeta{Name: "views"}, AggregationRule: &rbacv1.AggregationRule{
				ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"example.com/aggregate-to-views": "true"}}}}},
		},
		ClusterRoleBindings: []rbacv1.ClusterRoleBinding{{ObjectMeta: metav1.ObjectMeta{Name: "views"}, RoleRef: ref("ClusterRole", "views"), Subjects: everyone}},
	}
	const (
		widened   = "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: reader, namespace: default}\nrules: [{apiGroups: [\"\"], resources: [configmaps, secrets], verbs: [get]}]\n"
		reviews   = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reviews}\nrules: [{apiGroups: [authorization.k8s.io], resources: [selfsubjectaccessreviews], verbs: [create]}]\n"
		labelled  = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: more, labels: {example.com/aggregate-to-views: \"true\"}}\nrules: [{apiGroups: [\"\"], resources: [pods], verbs: [delete]}]\n"
		aggregate = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: reviews}\naggregationRule: {clusterRoleSelectors: [{matchLabels: {example.com/aggregate-to-views: \"true\"}}]}\n"
		cmReader  = "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: cm, namespace: team}\nrules: [{apiGroups: [\"\"], resources: [configmaps], verbs: [list]}]\n"
	)
	binding := func(kind, ns, name, roleKind, role, subject string) string {
		meta := "{name: " + name + "}"
		if ns != "" {
			meta = "{name: " + name + ", namespace: " + ns + "}"
		}
		return "apiVersion: rbac.authorization.k8s.io/v1\nkind: " + kind + "\nmetadata: " + meta + "\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: " + roleKind + ", name: " + role + "}\nsubjects: [" + subject + "]\n"
	}
	authenticated := "{apiGroup: rbac.authorization.k8s.io, kind: Group, name: \"system:authenticated\"}"
	ceiling := &policy.RBACCeiling{BindableRoles: []policy.RoleRef{{Kind: policy.KindClusterRole, Name: "secret-reader"}}}
	for _, tc := range []struct {
		name    string
		entries func(t *testing.T) []plans.Entry
		ceiling *policy.RBACCeiling
		refused []string // nil: allowed
		reads   int
		// unchanged are the entries the target found already as written.
		unchanged map[int]bool
	}{
		{name: "a role an earlier run bound to system:authenticated is widened",
			entries: func(t *testing.T) []plans.Entry {
				return []plans.Entry{rbacEntry(t, "guest", contract.ActionApply, widened)}
			},
			refused: []string{"entry 0: ", "policy/rbac-containment", "Group system:authenticated would gain {verbs: [get], apiGroups: [\"\"], resources: [secrets]} in namespace default",
				"RoleBinding default/everyone (held by the cluster) binds Group system:authenticated to Role default/reader (entry 0 of this plan)"},
			reads: 1},
		{name: "a role and its binding to system:authenticated, both written, are the plan's containment's to judge",
			entries: func(t *testing.T) []plans.Entry {
				return []plans.Entry{rbacEntry(t, "guest", contract.ActionApply, widened), rbacEntry(t, "guest", contract.ActionApply, reviews),
					rbacEntry(t, "guest", contract.ActionApply, binding("ClusterRoleBinding", "", "reviews", "ClusterRole", "reviews", authenticated))}
			},
			refused: []string{"entry 0: "}, reads: 1},
		{name: "a written role and its binding grant what they grant",
			entries: func(t *testing.T) []plans.Entry {
				return []plans.Entry{rbacEntry(t, "guest", contract.ActionApply, reviews),
					rbacEntry(t, "guest", contract.ActionApply, binding("ClusterRoleBinding", "", "reviews", "ClusterRole", "reviews", authenticated))}
			},
			reads: 1},
		{name: "system:authenticated bound to a live role",
			entries: func(t *testing.T) []plans.Entry {
				return []plans.Entry{rbacEntry(t, "guest", contract.ActionApply, binding("RoleBinding", "team", "secrets", "ClusterRole", "secret-reader", authenticated))}
			},
			refused: []string{"entry 0: ", "in namespace team", "RoleBinding team/secrets (entry 0 of this plan) binds Group system:authenticated to ClusterRole secret-reader (held by the cluster)"},
			reads:   1},
		{name: "system:authenticated bound to a live role the RBAC ceiling lists as bindable",
			entries: func(t *testing.T) []plans.Entry {
				return []plans.Entry{rbacEntry(t, "guest", contract.ActionApply, binding("RoleBinding", "team", "secrets", "ClusterRole", "secret-reader", authenticated))}
			},
			ceiling: ceiling, reads: 1},
		{name: "a role labelled for a live aggregated role bound to system:authenticated",
			entries: func(t *testing.T) []plans.Entry {
				return []plans.Entry{rbacEntry(t, "guest", contract.ActionApply, labelled)}
			},
			refused: []string{"entry 0: ", "{verbs: [delete], apiGroups: [\"\"], resources: [pods]} cluster-wide",
				"ClusterRoleBinding views (held by the cluster) binds Group system:authenticated to ClusterRole views (held by the cluster), which aggregates it from ClusterRole more (entry 0 of this plan)"},
			reads: 1},
		{name: "an aggregated role and its binding, both written, aggregating a live role",
			entries: func(t *testing.T) []plans.Entry {
				return []plans.Entry{rbacEntry(t, "guest", contract.ActionApply, labelled), rbacEntry(t, "guest", contract.ActionApply, aggregate),
					rbacEntry(t, "guest", contract.ActionApply, binding("ClusterRoleBinding", "", "reviews", "ClusterRole", "reviews", "{kind: Group, apiGroup: rbac.authorization.k8s.io, name: \"system:serviceaccounts\"}"))}
			},
			refused: []string{"Group system:serviceaccounts would gain {verbs: [delete], apiGroups: [\"\"], resources: [pods]} cluster-wide",
				"ClusterRoleBinding reviews (entry 2 of this plan) binds Group system:serviceaccounts to ClusterRole reviews (entry 1 of this plan), which aggregates it from ClusterRole more (entry 0 of this plan)"},
			reads: 1},
		{name: "a namespace's default service account gains a written role",
			entries: func(t *testing.T) []plans.Entry {
				return []plans.Entry{rbacEntry(t, "guest", contract.ActionApply, cmReader),
					rbacEntry(t, "guest", contract.ActionApply, binding("RoleBinding", "team", "cm", "Role", "cm", "{kind: ServiceAccount, name: default}"))}
			},
			refused: []string{"entry 1: ", "ServiceAccount team/default would gain {verbs: [list], apiGroups: [\"\"], resources: [configmaps]} in namespace team"},
			reads:   1},
		{name: "a patch of a role cannot be judged",
			entries: func(t *testing.T) []plans.Entry {
				return []plans.Entry{rbacEntry(t, "guest", contract.ActionPatch, widened)}
			},
			refused: []string{"entry 0: ", "a Patch of Role default/reader cannot be judged against the RBAC the guest cluster holds"},
			reads:   1},
		{name: "deleting a binding takes away",
			entries: func(t *testing.T) []plans.Entry {
				return []plans.Entry{rbacEntry(t, "guest", contract.ActionApply, widened), rbacEntry(t, "guest", contract.ActionDelete, binding("RoleBinding", "default", "everyone", "Role", "reader", authenticated))}
			},
			reads: 1},
		{name: "a cluster whose RBAC entries all change nothing is not read",
			entries: func(t *testing.T) []plans.Entry {
				return []plans.Entry{rbacEntry(t, "guest", contract.ActionApply, widened), rbacEntry(t, "guest", contract.ActionApply, reviews)}
			},
			unchanged: map[int]bool{0: true, 1: true}},
		{name: "a cluster with one RBAC entry that changes something is read",
			entries: func(t *testing.T) []plans.Entry {
				return []plans.Entry{rbacEntry(t, "guest", contract.ActionApply, widened), rbacEntry(t, "guest", contract.ActionApply, reviews)}
			},
			unchanged: map[int]bool{1: true},
			refused:   []string{"entry 0: "}, reads: 1},
		{name: "the management cluster is not read",
			entries: func(t *testing.T) []plans.Entry {
				return []plans.Entry{rbacEntry(t, routing.ClusterManagement, contract.ActionApply, cmReader),
					rbacEntry(t, routing.ClusterManagement, contract.ActionApply, binding("RoleBinding", "team", "cm", "Role", "cm", "{kind: ServiceAccount, name: default}"))}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			guest := &rbacTarget{fakeTarget: fakeTarget{name: "guest"}, state: live}
			mgmt := &rbacTarget{fakeTarget: fakeTarget{name: routing.ClusterManagement}, state: live}
			plan := planOf(tc.entries(t)...)
			plan.RBAC = tc.ceiling
			err := checkLiveRBAC(t.Context(), plan, map[string]Target{"guest": guest, routing.ClusterManagement: mgmt}, tc.unchanged)
			switch {
			case tc.refused == nil && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused != nil && err == nil:
				t.Fatal("allowed; want refused")
			}
			for _, part := range tc.refused {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("the error does not name %q:\n%v", part, err)
				}
			}
			if guest.reads != tc.reads || mgmt.reads != 0 {
				t.Errorf("read the guest's RBAC %d times, the management cluster's %d; want %d, 0", guest.reads, mgmt.reads, tc.reads)
			}
		})
	}
}
