package translate_test

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/routing"
)

// policyMutation builds one mutation of class Management (unless class is set) from its body.
func policyMutation(action contract.Action, group, resource, ns, name, body string) contract.Mutation {
	m := contract.Mutation{Class: contract.ClassManagement, Body: []byte(strings.TrimPrefix(body, "\n"))}
	m.Metadata.Action = action
	m.Metadata.SetIdentity(contract.Identity{Group: group, Version: "v1", Resource: resource, Namespace: ns, Name: name})
	return m
}

// deploymentMutation is an Apply of Deployment ns/name on the management cluster, its selector
// and pod template labelled app: app; podSpec holds the pod spec's fields, indented six spaces.
func deploymentMutation(ns, name, app, podSpec string) contract.Mutation {
	return policyMutation(contract.ActionApply, "apps", "deployments", ns, name,
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: "+name+", namespace: "+ns+"}\n"+
			"spec:\n  selector: {matchLabels: {app: "+app+"}}\n  template:\n    metadata: {labels: {app: "+app+"}}\n    spec:\n"+podSpec)
}

func role(ns, name, rules string) contract.Mutation {
	return policyMutation(contract.ActionApply, "rbac.authorization.k8s.io", "roles", ns, name,
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: "+name+", namespace: "+ns+"}\nrules:\n"+rules)
}

func clusterRole(name, rest string) contract.Mutation {
	return policyMutation(contract.ActionCreate, "rbac.authorization.k8s.io", "clusterroles", "", name,
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: \""+name+"\"}\n"+rest)
}

func roleBinding(ns, name, kind, ref string) contract.Mutation {
	return policyMutation(contract.ActionApply, "rbac.authorization.k8s.io", "rolebindings", ns, name,
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: "+name+", namespace: "+ns+"}\n"+
			"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: "+kind+", name: \""+ref+"\"}\nsubjects:\n- {kind: ServiceAccount, name: sample, namespace: "+ns+"}\n")
}

func clusterRoleBinding(name, ref string) contract.Mutation {
	return policyMutation(contract.ActionCreate, "rbac.authorization.k8s.io", "clusterrolebindings", "", name,
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: \""+name+"\"}\n"+
			"roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: \""+ref+"\"}\nsubjects:\n- {kind: Group, name: \"system:authenticated\"}\n")
}

func crd(name string) contract.Mutation {
	m := policyMutation(contract.ActionApply, "apiextensions.k8s.io", "customresourcedefinitions", "", name,
		"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: "+name+"}\n")
	m.Class = contract.ClassUserWorkload
	return m
}

// operatorCeiling is what the sample operator holds: its configmaps, read access to
// everything in its own group, and its status.
var operatorCeiling = &policy.RBACCeiling{Rules: []rbacv1.PolicyRule{
	{Verbs: []string{"get", "list", "watch", "create", "update"}, APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}},
	{Verbs: []string{"get", "list", "watch"}, APIGroups: []string{"operator.topolayer.dev"}, Resources: []string{"*"}},
	{Verbs: []string{"update"}, APIGroups: []string{"operator.topolayer.dev"}, Resources: []string{"*/status"}},
	{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"services"}, ResourceNames: []string{"sample"}},
	{Verbs: []string{"get"}, NonResourceURLs: []string{"/metrics", "/debug/*"}},
}}

func ptr(s string) *string { return &s }

// allCRDs lists every CustomResourceDefinition as privileged objects an operator may write.
var allCRDs = []routing.Match{{Group: ptr("apiextensions.k8s.io"), Resource: "customresourcedefinitions"}}

func TestPolicy(t *testing.T) {
	declared := &contract.OutputResources{UserWorkloadResources: contract.OutputResourceList{
		ExactResources: []contract.ExactResourceID{{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, Name: "samples.operator.topolayer.dev"}},
	}}
	generated := crd("")
	generated.Metadata.GenerateName = "sample-"
	patch := policyMutation(contract.ActionPatch, "rbac.authorization.k8s.io", "clusterroles", "", "sample", `{"rules":[{"verbs":["*"]}]}`)
	patch.Metadata.PatchType = contract.PatchTypeMerge
	deleteRole := policyMutation(contract.ActionDelete, "rbac.authorization.k8s.io", "clusterroles", "", "anything", "apiVersion: rbac.authorization.k8s.io/v1\nkind: DeleteOptions\n")
	webhook := policyMutation(contract.ActionCreate, "admissionregistration.k8s.io", "validatingwebhookconfigurations", "", "sample",
		"apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: sample}\n")
	apiService := policyMutation(contract.ActionCreate, "apiregistration.k8s.io", "apiservices", "", "v1.sample.topolayer.dev",
		"apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1.sample.topolayer.dev}\n")

	cases := map[string]struct {
		policy    *policy.Policy
		declared  *contract.OutputResources
		router    routing.Router // nil: the standalone placement
		mutations []contract.Mutation
		// rejected maps the source name of each rejected entry to a part of its reason; every
		// other entry must be applied.
		rejected map[string]string
		rule     string
	}{
		"no policy checks nothing": {
			mutations: []contract.Mutation{clusterRoleBinding("admin", "cluster-admin"), webhook, generated},
		},
		"role within the ceiling": {
			policy: &policy.Policy{RBAC: operatorCeiling},
			mutations: []contract.Mutation{
				role("openshift-sample", "sample", "- {apiGroups: [\"\"], resources: [configmaps], verbs: [get, update]}\n"+
					"- {apiGroups: [operator.topolayer.dev], resources: [samples, samples/status], verbs: [list]}\n"+
					"- {apiGroups: [operator.topolayer.dev], resources: [samples/status], verbs: [update]}\n"+
					"- {apiGroups: [\"\"], resources: [services], resourceNames: [sample], verbs: [get]}\n"),
				clusterRole("system:openshift:sample", "rules:\n- {nonResourceURLs: [/metrics, /debug/pprof], verbs: [get]}\n"),
				roleBinding("openshift-sample", "sample", "Role", "sample"),
				clusterRoleBinding("system:openshift:sample", "system:openshift:sample"),
			},
		},
		"role beyond the ceiling": {
			policy:    &policy.Policy{RBAC: operatorCeiling},
			mutations: []contract.Mutation{role("openshift-sample", "sample", "- {apiGroups: [\"\"], resources: [configmaps, pods], verbs: [get, delete]}\n")},
			rejected:  map[string]string{"sample": "rules[0]: grants get pods, delete configmaps, delete pods, beyond the operator's RBAC ceiling"},
			rule:      policy.RuleRBACEscalation,
		},
		"escalate and bind are verbs like any other": {
			policy:    &policy.Policy{RBAC: operatorCeiling},
			mutations: []contract.Mutation{clusterRole("sample", "rules:\n- {apiGroups: [rbac.authorization.k8s.io], resources: [clusterroles], verbs: [escalate, bind]}\n")},
			rejected:  map[string]string{"sample": "grants escalate clusterroles.rbac.authorization.k8s.io, bind clusterroles.rbac.authorization.k8s.io"},
			rule:      policy.RuleRBACEscalation,
		},
		"a named grant is not all names": {
			policy:    &policy.Policy{RBAC: operatorCeiling},
			mutations: []contract.Mutation{role("a", "r", "- {apiGroups: [\"\"], resources: [services], verbs: [get]}\n")},
			rejected:  map[string]string{"r": "grants get services, beyond"},
			rule:      policy.RuleRBACEscalation,
		},
		"a subresource is not its resource": {
			policy:    &policy.Policy{RBAC: operatorCeiling},
			mutations: []contract.Mutation{role("a", "r", "- {apiGroups: [\"\"], resources: [configmaps/status], verbs: [get]}\n")},
			rejected:  map[string]string{"r": "grants get configmaps/status"},
			rule:      policy.RuleRBACEscalation,
		},
		"non-resource URL outside the prefix": {
			policy:    &policy.Policy{RBAC: operatorCeiling},
			mutations: []contract.Mutation{clusterRole("r", "rules:\n- {nonResourceURLs: [/healthz], verbs: [get]}\n")},
			rejected:  map[string]string{"r": "grants get /healthz"},
			rule:      policy.RuleRBACEscalation,
		},
		"wildcard verbs rejected even under a wildcard ceiling": {
			policy:    &policy.Policy{RBAC: &policy.RBACCeiling{Rules: []rbacv1.PolicyRule{{Verbs: []string{"*"}, APIGroups: []string{"*"}, Resources: []string{"*"}}}}},
			mutations: []contract.Mutation{clusterRole("all", "rules:\n- {apiGroups: [\"\"], resources: [pods], verbs: [\"*\"]}\n")},
			rejected:  map[string]string{"all": "rules[0]: grants '*' in verbs, and the RBAC ceiling allows no wildcard"},
			rule:      policy.RuleRBACEscalation,
		},
		"wildcard resources rejected": {
			policy:    &policy.Policy{RBAC: operatorCeiling},
			mutations: []contract.Mutation{role("a", "r", "- {apiGroups: [operator.topolayer.dev], resources: [\"*\"], verbs: [get]}\n")},
			rejected:  map[string]string{"r": "grants '*' in resources"},
			rule:      policy.RuleRBACEscalation,
		},
		"wildcards allowed when covered": {
			policy:    &policy.Policy{RBAC: &policy.RBACCeiling{Rules: operatorCeiling.Rules, AllowWildcards: true}},
			mutations: []contract.Mutation{role("a", "r", "- {apiGroups: [operator.topolayer.dev], resources: [\"*\"], verbs: [get]}\n")},
		},
		"allowed wildcards must still be covered": {
			policy:    &policy.Policy{RBAC: &policy.RBACCeiling{Rules: operatorCeiling.Rules, AllowWildcards: true}},
			mutations: []contract.Mutation{role("a", "r", "- {apiGroups: [\"\"], resources: [configmaps], verbs: [\"*\"]}\n")},
			rejected:  map[string]string{"r": "grants * configmaps"},
			rule:      policy.RuleRBACEscalation,
		},
		"aggregated cluster role": {
			policy:    &policy.Policy{RBAC: operatorCeiling},
			mutations: []contract.Mutation{clusterRole("agg", "aggregationRule:\n  clusterRoleSelectors:\n  - matchLabels: {x: y}\n")},
			rejected:  map[string]string{"agg": "aggregationRule"},
			rule:      policy.RuleRBACEscalation,
		},
		"binding a broad group to cluster-admin: containment, ceiling or not": {
			policy:    &policy.Policy{RBAC: operatorCeiling},
			mutations: []contract.Mutation{clusterRoleBinding("system:openshift:oauth-apiserver", "cluster-admin")},
			rejected:  map[string]string{"system:openshift:oauth-apiserver": "binds the broad subjects[0] (Group system:authenticated) to ClusterRole cluster-admin, which grants everything"},
			rule:      policy.RuleRBACContainment,
		},
		"a role binding to cluster-admin too": {
			policy:    &policy.Policy{RBAC: operatorCeiling},
			mutations: []contract.Mutation{roleBinding("openshift-sample", "admin", "ClusterRole", "cluster-admin")},
			rejected:  map[string]string{"admin": "binds ClusterRole cluster-admin"},
			rule:      policy.RuleRBACEscalation,
		},
		"cluster-admin when bindable": {
			policy:    &policy.Policy{RBAC: &policy.RBACCeiling{Rules: operatorCeiling.Rules, BindableRoles: []policy.RoleRef{{Kind: "ClusterRole", Name: "cluster-admin"}}}},
			mutations: []contract.Mutation{clusterRoleBinding("admin", "cluster-admin")},
		},
		"binding to a cluster role outside the plan": {
			policy:    &policy.Policy{RBAC: operatorCeiling},
			mutations: []contract.Mutation{roleBinding("openshift-sample", "b", "ClusterRole", "view")},
			rejected:  map[string]string{"b": "binds ClusterRole view, which is neither written by this plan nor bindable"},
			rule:      policy.RuleRBACEscalation,
		},
		"binding to a bindable role": {
			policy: &policy.Policy{RBAC: &policy.RBACCeiling{Rules: operatorCeiling.Rules, BindableRoles: []policy.RoleRef{{Kind: "ClusterRole", Name: "view"}, {Kind: "Role", Namespace: "a", Name: "reader"}}}},
			mutations: []contract.Mutation{
				clusterRoleBinding("b", "view"),
				roleBinding("a", "c", "Role", "reader"),
			},
		},
		"a bindable role is bindable in its own namespace only": {
			policy:    &policy.Policy{RBAC: &policy.RBACCeiling{Rules: operatorCeiling.Rules, BindableRoles: []policy.RoleRef{{Kind: "Role", Namespace: "a", Name: "reader"}}}},
			mutations: []contract.Mutation{roleBinding("b", "c", "Role", "reader")},
			rejected:  map[string]string{"c": "binds Role b/reader"},
			rule:      policy.RuleRBACEscalation,
		},
		"binding to a role of the plan that is beyond the ceiling": {
			policy: &policy.Policy{RBAC: operatorCeiling},
			mutations: []contract.Mutation{
				role("a", "r", "- {apiGroups: [\"\"], resources: [nodes], verbs: [get]}\n"),
				roleBinding("a", "b", "Role", "r"),
			},
			rejected: map[string]string{"r": "grants get nodes"},
			rule:     policy.RuleRBACEscalation,
		},
		"a patch of RBAC": {
			policy:    &policy.Policy{RBAC: operatorCeiling},
			mutations: []contract.Mutation{patch},
			rejected:  map[string]string{"sample": "a Patch of RBAC cannot be checked"},
			rule:      policy.RuleRBACEscalation,
		},
		"a delete of RBAC grants nothing": {
			policy:    &policy.Policy{RBAC: operatorCeiling},
			mutations: []contract.Mutation{deleteRole},
		},
		"a declared CRD the policy lists": {
			policy:    &policy.Policy{Privileged: []routing.Match{{Group: ptr("apiextensions.k8s.io"), Resource: "customresourcedefinitions", Name: "samples.*"}}},
			declared:  declared,
			mutations: []contract.Mutation{crd("samples.operator.topolayer.dev")},
		},
		"undeclared CRD": {
			policy:    &policy.Policy{Privileged: allCRDs},
			declared:  declared,
			mutations: []contract.Mutation{crd("widgets.operator.topolayer.dev")},
			rejected:  map[string]string{"widgets.operator.topolayer.dev": "is privileged (it changes what the API server serves or admits) and not declared in the UserWorkload output-resources"},
			rule:      policy.RulePrivilegedObject,
		},
		"CRD from a generateName, without declarations": {
			policy:    &policy.Policy{Privileged: []routing.Match{{Group: ptr("apiextensions.k8s.io"), Resource: "customresourcedefinitions", GenerateName: "sample-"}}},
			mutations: []contract.Mutation{generated},
			rejected:  map[string]string{"": "the operator has no output-resources"},
			rule:      policy.RulePrivilegedObject,
		},
		"CRD listed and declared as a generated name": {
			policy: &policy.Policy{Privileged: []routing.Match{{Group: ptr("apiextensions.k8s.io"), Resource: "customresourcedefinitions", GenerateName: "sample-"}}},
			declared: &contract.OutputResources{UserWorkloadResources: contract.OutputResourceList{
				GeneratedNameResources: []contract.ExactResourceID{{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, Name: "sample-"}},
			}},
			mutations: []contract.Mutation{generated},
		},
		"a CRD that routing drops is never written": {
			policy: &policy.Policy{},
			router: &routing.Table{Rules: []routing.Rule{
				{Name: "all", Cluster: routing.ClusterStandalone},
				{Name: "no-crds", Match: routing.Match{Resource: "customresourcedefinitions"}, Disposition: routing.Dropped},
			}},
			mutations: []contract.Mutation{crd("widgets.operator.topolayer.dev")},
			rejected:  map[string]string{},
		},
		"no declarations: listing alone allows nothing": {
			policy: &policy.Policy{Privileged: []routing.Match{
				{Group: ptr("apiextensions.k8s.io"), Resource: "customresourcedefinitions"},
				{Group: ptr("admissionregistration.k8s.io"), Resource: "validatingwebhookconfigurations"},
				{Group: ptr("apiregistration.k8s.io"), Resource: "apiservices"},
			}},
			mutations: []contract.Mutation{crd("widgets.operator.topolayer.dev"), webhook, apiService},
			rejected: map[string]string{
				"widgets.operator.topolayer.dev": "the operator has no output-resources: without declarations no privileged object is written",
				"sample":                         "the operator has no output-resources",
				"v1.sample.topolayer.dev":        "the operator has no output-resources",
			},
			rule: policy.RulePrivilegedObject,
		},
		"no declarations, nothing listed": {
			policy:    &policy.Policy{},
			mutations: []contract.Mutation{crd("widgets.operator.topolayer.dev"), webhook, apiService},
			rejected: map[string]string{
				"widgets.operator.topolayer.dev": "the configuration does not list it",
				"sample":                         "the configuration does not list it",
				"v1.sample.topolayer.dev":        "the configuration does not list it",
			},
			rule: policy.RulePrivilegedObject,
		},
		"a declared CRD is not enough": {
			policy:    &policy.Policy{},
			declared:  declared,
			mutations: []contract.Mutation{crd("samples.operator.topolayer.dev")},
			rejected:  map[string]string{"samples.operator.topolayer.dev": "the configuration does not list it (policy.operators[].privileged); an operator's own declarations are not enough"},
			rule:      policy.RulePrivilegedObject,
		},
		"listed by pattern and declared": {
			policy: &policy.Policy{Privileged: []routing.Match{
				{Group: ptr("apiextensions.k8s.io"), Resource: "customresourcedefinitions", Name: "widgets.*"},
				{Group: ptr("admissionregistration.k8s.io"), Resource: "validatingwebhookconfigurations", Name: "sample"},
			}},
			declared: &contract.OutputResources{
				UserWorkloadResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, Name: "widgets.operator.topolayer.dev"}}},
				ManagementResources:   contract.OutputResourceList{ExactResources: []contract.ExactResourceID{{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}, Name: "sample"}}},
			},
			mutations: []contract.Mutation{crd("widgets.operator.topolayer.dev"), webhook},
		},
		"webhook and API service not listed": {
			policy:    &policy.Policy{Privileged: []routing.Match{{Group: ptr("apiextensions.k8s.io"), Resource: "customresourcedefinitions"}}},
			mutations: []contract.Mutation{webhook, apiService},
			rejected: map[string]string{
				"sample":                  "validatingwebhookconfigurations.admissionregistration.k8s.io is privileged",
				"v1.sample.topolayer.dev": "apiservices.apiregistration.k8s.io is privileged",
			},
			rule: policy.RulePrivilegedObject,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			e := translate.Standalone("sample-operator", tc.declared)
			e.Policy = tc.policy
			if tc.router != nil {
				e.Router = tc.router
			}
			plan := e.Plan(&contract.OutputDir{Mutations: tc.mutations})
			if len(plan.Entries) != len(tc.mutations) {
				t.Fatalf("%d entries for %d mutations", len(plan.Entries), len(tc.mutations))
			}
			for _, entry := range plan.Entries {
				want, reject := tc.rejected[entry.Source.Name]
				switch {
				case reject && entry.Disposition != routing.Rejected:
					t.Errorf("%s: %s, want rejected (%s)", entry.Source, entry.Disposition, want)
				case reject && (entry.Rule != tc.rule || !strings.Contains(entry.Reason, want)):
					t.Errorf("%s: rule %q, reason %q; want rule %q and a reason with %q", entry.Source, entry.Rule, entry.Reason, tc.rule, want)
				case !reject && tc.router != nil && entry.Disposition == routing.Rejected:
					t.Errorf("%s: rejected by %s: %s", entry.Source, entry.Rule, entry.Reason)
				case !reject && tc.router == nil && entry.Disposition != routing.Apply:
					t.Errorf("%s: %s by %s: %s; want apply", entry.Source, entry.Disposition, entry.Rule, entry.Reason)
				}
			}
			if len(tc.rejected) > 0 && len(plan.ByCluster()) > 0 && plan.Summary.Rejected == 0 {
				t.Errorf("nothing rejected: %+v", plan.Summary)
			}
		})
	}
}

func TestIsPrivileged(t *testing.T) {
	for gr, want := range map[schema.GroupResource]bool{
		{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}:                 true,
		{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}:     true,
		{Group: "admissionregistration.k8s.io", Resource: "validatingadmissionpolicybindings"}: true,
		{Group: "apiregistration.k8s.io", Resource: "apiservices"}:                             true,
		{Group: "", Resource: "configmaps"}:                                                    false,
		{Group: "rbac.authorization.k8s.io", Resource: "clusterroles"}:                         false,
		{Group: "operator.openshift.io", Resource: "customresourcedefinitions"}:                false,
	} {
		if got := policy.IsPrivileged(gr); got != want {
			t.Errorf("IsPrivileged(%s) = %v, want %v", gr, got, want)
		}
	}
}

// TestPrivilegedDeclaredBySupplement: without the operator's output-resources, a privileged
// object the configuration both lists and declares (operators[].supplements.outputs) is
// written; one it lists but does not declare is not.
func TestPrivilegedDeclaredBySupplement(t *testing.T) {
	supplement := &contract.OutputResources{UserWorkloadResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{
		{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}, Name: "samples.operator.topolayer.dev"},
	}}}
	e := translate.Standalone("sample-operator", nil)
	e.Supplement = supplement
	e.Policy = &policy.Policy{Privileged: allCRDs}
	p := e.Plan(&contract.OutputDir{Mutations: []contract.Mutation{crd("samples.operator.topolayer.dev"), crd("widgets.operator.topolayer.dev")}})
	for _, entry := range p.Entries {
		want := routing.Apply
		if entry.Source.Name == "widgets.operator.topolayer.dev" {
			want = routing.Rejected
		}
		if entry.Disposition != want {
			t.Errorf("%s: %s by %s: %s; want %s", entry.Source, entry.Disposition, entry.Rule, entry.Reason, want)
		}
	}
}
