package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/translate/scope"
)

// TestPlanTableShowsScopeWarnings: plan's table output, not only its JSON, lists the
// warnings of the simulated-namespace rules: the selector-scope warnings of CAO's network
// policies (peers that reach namespaces outside the hosted control plane), and the
// plan-level check's warning when a configured patch undoes the scoping of the deny-all
// policy, making it select every pod of the HCP namespace.
func TestPlanTableShowsScopeWarnings(t *testing.T) {
	var c *corpus.Case
	for _, cc := range corpus.CAOCases(t) {
		if filepath.Base(cc.Dir) == "minimal-cluster" {
			c = &cc
		}
	}
	if c == nil {
		t.Fatal("no CAO case minimal-cluster")
	}
	base, err := os.ReadFile(hostedConfig)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "hosted.yaml")
	patch := `transforms:
  patches:
  - name: unscoped-deny-all
    cluster: management
    match: {group: networking.k8s.io, resource: networkpolicies, namespace: openshift-authentication, name: default-deny-all}
    json6902: |
      - {op: replace, path: /spec/podSelector, value: {}}
`
	if err := os.WriteFile(config, append(base, []byte(patch)...), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		config string
		want   []string
	}{
		"as configured": {hostedConfig, []string{
			"\nWARNINGS (",
			"\n" + scope.Rule + " (1)\n",
			"networkpolicies/oauth-server-networkpolicy: spec.ingress[1].from[0]: ",
		}},
		"with a patch that undoes the scoping": {config, []string{
			"\nWARNINGS (",
			"\n" + scope.RuleCheck + " (1)\n",
			"networkpolicies/default-deny-all: spec.podSelector: does not keep to simulated namespace openshift-authentication",
		}},
	} {
		t.Run(name, func(t *testing.T) {
			stdout, _, err := run(t, "plan", "--config", tc.config, "--from", c.ExpectedOutput, "--output-resources", c.OutputResources, "--operator", c.Operator)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.want {
				if !strings.Contains(stdout, want) {
					t.Errorf("the table does not show %q:\n%s", want, stdout[strings.LastIndex(stdout, "topology:"):])
				}
			}
		})
	}
}
