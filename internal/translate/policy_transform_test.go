package translate_test

import (
	"strings"
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/routing"
)

// TestPolicyAfterTransforms shows that policy checks the objects as they will be written: a
// configured patch (compiled as topology.Transforms does) that widens a Role or rebinds a
// binding beyond the RBAC ceiling rejects the entry, and with it the plan.
func TestPolicyAfterTransforms(t *testing.T) {
	rbacGroup := "rbac.authorization.k8s.io"
	within := role("openshift-sample", "sample", "- {apiGroups: [\"\"], resources: [configmaps], verbs: [get]}\n")
	cases := map[string]struct {
		patch     transform.Patch
		mutations []contract.Mutation
		rejected  map[string]string // source name -> part of the reason
	}{
		"a strategic-merge patch that adds a rule beyond the ceiling": {
			patch: transform.Patch{Name: "widen", Match: routing.Match{Group: &rbacGroup, Resource: "roles"},
				StrategicMerge: "rules:\n- {apiGroups: [\"\"], resources: [configmaps], verbs: [get]}\n- {apiGroups: [\"\"], resources: [pods], verbs: [delete]}\n"},
			mutations: []contract.Mutation{within},
			rejected:  map[string]string{"sample": "rules[1]: grants delete pods, beyond the operator's RBAC ceiling"},
		},
		"a JSON patch that makes a verb a wildcard": {
			patch: transform.Patch{Name: "wildcard", Match: routing.Match{Resource: "roles"},
				JSON6902: `[{"op": "replace", "path": "/rules/0/verbs", "value": ["*"]}]`},
			mutations: []contract.Mutation{within},
			rejected:  map[string]string{"sample": "rules[0]: grants '*' in verbs"},
		},
		"a patch that rebinds to cluster-admin": {
			patch: transform.Patch{Name: "rebind", Match: routing.Match{Resource: "rolebindings"},
				JSON6902: `[{"op": "replace", "path": "/roleRef", "value": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"}}]`},
			mutations: []contract.Mutation{within, roleBinding("openshift-sample", "binding", "Role", "sample")},
			rejected:  map[string]string{"binding": "binds ClusterRole cluster-admin, which grants everything"},
		},
		"a patch within the ceiling": {
			patch: transform.Patch{Name: "narrow", Match: routing.Match{Resource: "roles"},
				StrategicMerge: "metadata: {labels: {a: b}}\n"},
			mutations: []contract.Mutation{within, roleBinding("openshift-sample", "binding", "Role", "sample")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			transform, err := tc.patch.Transform()
			if err != nil {
				t.Fatal(err)
			}
			e := translate.Standalone("sample-operator", nil)
			e.Policy = &policy.Policy{RBAC: operatorCeiling}
			e.Stages = translate.StandaloneStages(transform)
			plan := e.Plan(&contract.OutputDir{Mutations: tc.mutations})
			for _, entry := range plan.Entries {
				want, reject := tc.rejected[entry.Source.Name]
				switch {
				case reject && (entry.Disposition != routing.Rejected || entry.Rule != policy.RuleRBACEscalation || !strings.Contains(entry.Reason, want)):
					t.Errorf("%s: %s by %q: %q; want rejected by %q with %q", entry.Source, entry.Disposition, entry.Rule, entry.Reason, policy.RuleRBACEscalation, want)
				case !reject && entry.Disposition != routing.Apply:
					t.Errorf("%s: %s by %s: %s; want apply", entry.Source, entry.Disposition, entry.Rule, entry.Reason)
				case !reject && entry.Object == nil:
					t.Errorf("%s: applied without its final object", entry.Source)
				}
			}
			if got := len(plan.Rejected()) > 0; got != (len(tc.rejected) > 0) {
				t.Errorf("plan rejected: %v, want %v", got, len(tc.rejected) > 0)
			}
		})
	}
}
