package config_test

import (
	"strings"
	"testing"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/routing"
)

// samplePolicy bounds the sample operator: its RBAC ceiling is what its service account holds.
const samplePolicy = `policy:
  operators:
  - name: sample-operator
    privileged:
    - {group: apiextensions.k8s.io, resource: customresourcedefinitions, name: "samples.*"}
    rbacCeiling:
      rules:
      - {apiGroups: [""], resources: [configmaps, secrets, services, serviceaccounts], verbs: [get, list, watch, create, update, patch]}
      - {apiGroups: [operator.topolayer.dev], resources: [samples, samples/status], verbs: [get, list, watch, update]}
      bindableRoles:
      - {kind: ClusterRole, name: view}
`

func TestPolicyFor(t *testing.T) {
	for _, tc := range []struct {
		name, in, operator string
		wantPrivileged     int
		wantCeiling        bool
		wantPodSecurity    policy.PodSecurityMode
	}{
		{"standalone defaults: nothing listed, strip", header + "topology: {type: Standalone}\n", "sample-operator", 0, false, policy.PodSecurityStrip},
		{"hosted defaults: the same", header + "topology: {type: Hosted, hosted: {namespace: clusters-example, hostedControlPlane: example}}\n", "sample-operator", 0, false, policy.PodSecurityStrip},
		{"reject", header + "policy: {podSecurity: reject}\n", "sample-operator", 0, false, policy.PodSecurityReject},
		{"the operator's bounds", header + samplePolicy, "sample-operator", 1, true, policy.PodSecurityStrip},
		{"another operator gets the defaults", header + samplePolicy, "sample-audit-operator", 0, false, policy.PodSecurityStrip},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			p := cfg.PolicyFor(tc.operator)
			if len(p.Privileged) != tc.wantPrivileged || (p.RBAC != nil) != tc.wantCeiling || p.PodSecurity != tc.wantPodSecurity {
				t.Fatalf("PolicyFor(%q) = %+v", tc.operator, p)
			}
		})
	}
}

// TestPolicyOnTheSampleOutputs plans the shipped sample output directory with the policies of
// a configuration: its Role, ClusterRole and their bindings are within a ceiling that holds
// what they grant, and rejected by one that does not.
func TestPolicyOnTheSampleOutputs(t *testing.T) {
	out, err := contract.ReadOutputDir("../examples/outputs/sample-operator", contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	declared := contracttest.ParseFile(t, "../examples/outputs/sample-operator-output-resources.yaml", contract.ParseOutputResources)
	narrow := strings.Replace(samplePolicy, "resources: [samples, samples/status], verbs: [get, list, watch, update]", "resources: [samples/status], verbs: [update]", 1)
	for _, tc := range []struct {
		name, policy string
		wantRejected []string // source names, rule policy/rbac-escalation
	}{
		{"no policy", "", nil},
		{"within the ceiling", samplePolicy, nil},
		{"beyond the ceiling", narrow, []string{"system:openshift:sample"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(header + "topology: {type: Standalone}\n" + tc.policy))
			if err != nil {
				t.Fatal(err)
			}
			e := translate.Standalone("sample-operator", declared)
			e.Policy = cfg.PolicyFor("sample-operator")
			plan := e.Plan(out)
			var got []string
			for _, entry := range plan.Rejected() {
				if entry.Rule != policy.RuleRBACEscalation || entry.Source.Resource != "clusterroles" {
					t.Errorf("%s: rejected by %s: %s", entry.Source, entry.Rule, entry.Reason)
				}
				got = append(got, entry.Source.Name)
			}
			if strings.Join(got, ",") != strings.Join(tc.wantRejected, ",") {
				t.Fatalf("rejected %v, want %v", got, tc.wantRejected)
			}
			if len(tc.wantRejected) == 0 && plan.Summary.Apply != len(plan.Entries) {
				t.Fatalf("summary %+v", plan.Summary)
			}
			for _, entry := range plan.Entries {
				if entry.Disposition == routing.Rejected && !strings.Contains(entry.Reason, "grants get samples.operator.topolayer.dev") {
					// the reason names the grant beyond the ceiling
					t.Errorf("reason: %s", entry.Reason)
				}
			}
		})
	}
}

// TestManagementBoundsMustBePositive: a bound of the management cluster's allow-list that a
// configuration widens for one operator stays a bound; the error names the field.
func TestManagementBoundsMustBePositive(t *testing.T) {
	for _, tc := range []struct{ management, want string }{
		{"{maxReplicas: -1}", "policy.operators[0].management.maxReplicas: Invalid value: -1: must not be negative"},
		{"{maxScratch: 0}", `policy.operators[0].management.maxScratch: Invalid value: "0": must be positive`},
		{"{maxClaim: 0}", `policy.operators[0].management.maxClaim: Invalid value: "0": must be positive`},
		{"{maxClaim: -1Gi}", `policy.operators[0].management.maxClaim: Invalid value: "-1Gi": must be positive`},
		{"{maxClaim: 20Gi, maxScratch: 4Gi}", ""},
	} {
		t.Run(tc.management, func(t *testing.T) {
			_, err := config.Parse([]byte(header + "policy:\n  operators:\n  - name: sample-operator\n    management: " + tc.management + "\n"))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Parse: %v, want no error", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Parse: %v, want an error naming %q", err, tc.want)
			}
		})
	}
}
