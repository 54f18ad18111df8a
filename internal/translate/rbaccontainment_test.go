package translate_test

import (
	"fmt"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/routing"
)

// bindingOf builds a RoleBinding (namespace set) or ClusterRoleBinding of class to roleKind/ref
// for one subject.
func bindingOf(class contract.Class, ns, name, roleKind, ref, subjectKind, subject string) contract.Mutation {
	resource, kind, meta := "clusterrolebindings", "ClusterRoleBinding", "{name: "+name+"}"
	if ns != "" {
		resource, kind, meta = "rolebindings", "RoleBinding", "{name: "+name+", namespace: "+ns+"}"
	}
	subjectNS := ""
	if subjectKind == rbacv1.ServiceAccountKind {
		subjectNS = ", namespace: openshift-sample"
	}
	m := policyMutation(contract.ActionApply, "rbac.authorization.k8s.io", resource, ns, name,
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: "+kind+"\nmetadata: "+meta+"\n"+
			"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: "+roleKind+", name: \""+ref+"\"}\n"+
			"subjects:\n- {kind: "+subjectKind+", name: \""+subject+"\""+subjectNS+"}\n")
	m.Class = class
	return m
}

// TestDefaultRBACContainment checks the default RBAC policy, without any ceiling, against
// issue 15: on the management cluster no binding to users or groups and no ClusterRole or
// ClusterRoleBinding; on either cluster, in either topology, no broad subject bound to
// cluster-admin, to a role with wildcards or escalate/bind/impersonate, or to a role whose
// rules the plan does not show; a ceiling widens it for its classes only.
func TestDefaultRBACContainment(t *testing.T) {
	const hcp = "clusters-example"
	hosted := func(p *policy.Policy) translate.Engine { return profileEngine(hcp, p) }
	standalone := func(p *policy.Policy) translate.Engine { return standaloneEngine(nil, p) }
	const ns = "openshift-sample"
	reader := "- {apiGroups: [\"\"], resources: [configmaps], verbs: [get]}\n"
	withClass := func(m contract.Mutation, c contract.Class) contract.Mutation { m.Class = c; return m }
	roleOf := func(c contract.Class, rules string) contract.Mutation { return withClass(role(ns, "r", rules), c) }
	clusterRoleOf := func(c contract.Class, rules string) contract.Mutation {
		return withClass(clusterRole("cr", "rules:\n"+rules), c)
	}
	adminEverywhere := &policy.RBACCeiling{
		Rules:         []rbacv1.PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}},
		BindableRoles: []policy.RoleRef{{Kind: policy.KindClusterRole, Name: policy.ClusterAdmin}},
		Classes:       []contract.Class{contract.ClassUserWorkload},
	}

	type want struct {
		rule, reason string // rejected with this rule and part of the reason; "" rule: applied
	}
	var cases []struct {
		name   string
		engine translate.Engine
		ms     []contract.Mutation
		want   want
	}
	add := func(name string, e translate.Engine, w want, ms ...contract.Mutation) {
		cases = append(cases, struct {
			name   string
			engine translate.Engine
			ms     []contract.Mutation
			want   want
		}{name, e, ms, w})
	}
	broad := []struct{ kind, name string }{
		{rbacv1.UserKind, "system:anonymous"}, {rbacv1.GroupKind, "system:unauthenticated"},
		{rbacv1.GroupKind, "system:authenticated"}, {rbacv1.GroupKind, "system:masters"},
		{rbacv1.GroupKind, "system:serviceaccounts"}, {rbacv1.GroupKind, "any-group"},
	}
	for _, s := range broad {
		for _, topo := range []struct {
			name   string
			engine func(*policy.Policy) translate.Engine
		}{{"hosted", hosted}, {"standalone", standalone}} {
			e := topo.engine(&policy.Policy{})
			for _, class := range []contract.Class{contract.ClassManagement, contract.ClassUserWorkload} {
				at := fmt.Sprintf("%s %s, %s %s: ", topo.name, class, s.kind, s.name)
				add(at+"cluster-admin", e, want{policy.RuleRBACContainment, "to ClusterRole cluster-admin, which grants everything"},
					bindingOf(class, ns, "b", policy.KindClusterRole, policy.ClusterAdmin, s.kind, s.name))
				add(at+"a role outside the plan", e, want{policy.RuleRBACContainment, "its rules cannot be checked"},
					bindingOf(class, ns, "b", policy.KindClusterRole, "admin", s.kind, s.name))
				for _, rules := range []struct{ what, rules string }{
					{"'*' in verbs", "- {apiGroups: [\"\"], resources: [secrets], verbs: [\"*\"]}\n"},
					{"'*' in resources", "- {apiGroups: [\"\"], resources: [\"*\"], verbs: [get]}\n"},
					{"grants escalate", "- {apiGroups: [rbac.authorization.k8s.io], resources: [roles], verbs: [escalate]}\n"},
					{"grants bind", "- {apiGroups: [rbac.authorization.k8s.io], resources: [roles], verbs: [bind]}\n"},
					{"grants impersonate", "- {apiGroups: [\"\"], resources: [serviceaccounts], verbs: [impersonate]}\n"},
					{"grants get on secrets", "- {apiGroups: [\"\"], resources: [secrets], verbs: [get]}\n"},
					{"grants create on pods/exec", "- {apiGroups: [\"\"], resources: [pods/exec], verbs: [create]}\n"},
					{"grants create on serviceaccounts/token", "- {apiGroups: [\"\"], resources: [serviceaccounts/token], verbs: [create]}\n"},
				} {
					add(at+"a role that "+rules.what, e, want{policy.RuleRBACContainment, rules.what},
						roleOf(class, rules.rules), bindingOf(class, ns, "b", policy.KindRole, "r", s.kind, s.name))
				}
				add(at+"a reader role of the plan", e, want{},
					roleOf(class, reader), bindingOf(class, ns, "b", policy.KindRole, "r", s.kind, s.name))
			}
		}
	}
	// A cluster-wide binding of the guest's users: on the guest only.
	add("hosted UserWorkload: a ClusterRoleBinding of system:authenticated to cluster-admin", hosted(&policy.Policy{}),
		want{policy.RuleRBACContainment, "cluster-admin"},
		bindingOf(contract.ClassUserWorkload, "", "b", policy.KindClusterRole, policy.ClusterAdmin, rbacv1.GroupKind, "system:authenticated"))
	add("hosted Management: a ClusterRoleBinding of a service account to a ClusterRole of the plan becomes namespaced", hosted(&policy.Policy{}),
		want{}, clusterRoleOf(contract.ClassManagement, reader),
		bindingOf(contract.ClassManagement, "", "crb", policy.KindClusterRole, "cr", rbacv1.ServiceAccountKind, "sample"))
	// The guest is not weakened by default: cluster-admin for a person or a default account,
	// and (policy/privileged-object) roles aggregated into admin/edit/view, a global default
	// priority class.
	for _, s := range []struct{ kind, name string }{{rbacv1.UserKind, "alice"}, {rbacv1.ServiceAccountKind, "default"}} {
		add("hosted UserWorkload: cluster-admin to "+s.kind+" "+s.name, hosted(&policy.Policy{}),
			want{policy.RuleRBACContainment, "a named user or a namespace's default service account with everything"},
			bindingOf(contract.ClassUserWorkload, "", "b", policy.KindClusterRole, policy.ClusterAdmin, s.kind, s.name))
	}
	add("hosted UserWorkload: cluster-admin to a user, the ceiling lists it", hosted(&policy.Policy{RBAC: adminEverywhere}), want{},
		bindingOf(contract.ClassUserWorkload, "", "b", policy.KindClusterRole, policy.ClusterAdmin, rbacv1.UserKind, "alice"))
	for _, label := range []string{"aggregate-to-admin", "aggregate-to-edit", "aggregate-to-view"} {
		add("hosted UserWorkload: a ClusterRole labelled "+label, hosted(&policy.Policy{}),
			want{policy.RulePrivilegedObject, "its label rbac.authorization.k8s.io/" + label + " adds its rules to a default role"},
			withClass(policyMutation(contract.ActionApply, "rbac.authorization.k8s.io", "clusterroles", "", "agg",
				"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: agg, labels: {rbac.authorization.k8s.io/"+label+": \"true\"}}\n"+
					"rules:\n- {apiGroups: [\"\"], resources: [configmaps], verbs: [get]}\n"), contract.ClassUserWorkload))
	}
	add("hosted UserWorkload: a global default PriorityClass", hosted(&policy.Policy{}),
		want{policy.RulePrivilegedObject, "globalDefault: every pod without a priority class would get it"},
		withClass(policyMutation(contract.ActionApply, "scheduling.k8s.io", "priorityclasses", "", "everyone",
			"apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: everyone}\nvalue: 1000000000\nglobalDefault: true\n"), contract.ClassUserWorkload))
	// The ceiling widens per class.
	add("a UserWorkload ceiling makes cluster-admin bindable for UserWorkload", hosted(&policy.Policy{RBAC: adminEverywhere}), want{},
		bindingOf(contract.ClassUserWorkload, "", "b", policy.KindClusterRole, policy.ClusterAdmin, rbacv1.GroupKind, "system:authenticated"))
	add("a UserWorkload ceiling does not widen Management", hosted(&policy.Policy{RBAC: adminEverywhere}),
		want{policy.RuleRBACContainment, "cluster-admin"},
		bindingOf(contract.ClassManagement, ns, "b", policy.KindClusterRole, policy.ClusterAdmin, rbacv1.GroupKind, "system:authenticated"))
	add("a ceiling lists an existing role as bindable", hosted(&policy.Policy{RBAC: &policy.RBACCeiling{Rules: operatorCeiling.Rules,
		BindableRoles: []policy.RoleRef{{Kind: policy.KindClusterRole, Name: "view"}}}}), want{},
		bindingOf(contract.ClassUserWorkload, "", "b", policy.KindClusterRole, "view", rbacv1.GroupKind, "system:authenticated"))

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.engine.Plan(&contract.OutputDir{Mutations: tc.ms})
			var rejected []string
			for _, e := range p.Entries {
				if e.Disposition == routing.Rejected {
					rejected = append(rejected, e.Rule+": "+e.Reason)
					continue
				}
				if e.Disposition != routing.Apply {
					t.Errorf("%s: %s", e.Source, e.Disposition)
				}
				if e.Target.Cluster != routing.ClusterManagement {
					continue
				}
				// What lands on management: no cluster-scoped RBAC, no user or group subject.
				if r := e.Target.Identity.Resource; r == "clusterroles" || r == "clusterrolebindings" {
					t.Errorf("%s lands on management as %s", e.Source, e.Target.Identity)
				}
				subjects, _ := e.Object.Object["subjects"].([]any)
				for _, s := range subjects {
					if k := s.(map[string]any)["kind"]; k == rbacv1.UserKind || k == rbacv1.GroupKind {
						t.Errorf("%s lands on management binding %v", e.Source, s)
					}
				}
			}
			switch {
			case tc.want.rule == "" && len(rejected) > 0:
				t.Errorf("rejected: %v", rejected)
			case tc.want.rule != "" && !containsAll(rejected, tc.want.rule+": ", tc.want.reason):
				t.Errorf("rejected %v; want one by %s naming %q", rejected, tc.want.rule, tc.want.reason)
			}
		})
	}
}

// containsAll reports whether one of ss contains every part.
func containsAll(ss []string, parts ...string) bool {
	for _, s := range ss {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(s, p)
		}
		if ok {
			return true
		}
	}
	return false
}
