package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
)

// TestCLIPlanLeftBehind: an operator whose configuration declares a family of Secrets by a
// name pattern (as CAO's identity-provider copies are) places two members; when a later
// output writes one of them only and deletes nothing, plan on the live clusters warns of the
// other, left behind; an output that writes none of the family warns of nothing.
func TestCLIPlanLeftBehind(t *testing.T) {
	bin := cliBinary(t)
	ns := "openshift-e2e-family-" + uniqueSuffix(t)
	cfg := configWith(t, "hosted.yaml", func(cfg *config.TopologyConfig) {
		cfg.Operators = append(cfg.Operators, config.Operator{Name: cliOperator, Command: []string{"true"}, Supplements: config.Supplements{
			Outputs: &contract.OutputResources{ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{{
				ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "secrets"}, Namespace: ns, Name: "idp-*-file-data",
			}}}},
		}})
	})
	secret := func(name string) contract.Mutation {
		return mutation(contract.ClassUnspecified, contract.ActionCreate, "/v1/secrets", ns, name,
			"apiVersion: v1\nkind: Secret\nmetadata: {name: "+name+", namespace: "+ns+"}\ntype: Opaque\ndata: {htpasswd: c2VjcmV0}\n")
	}
	outputs := func(ms ...contract.Mutation) string {
		dir := filepath.Join(t.TempDir(), "out")
		if err := contract.WriteOutputDir(dir, &contract.OutputDir{Mutations: ms}, contract.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	kubeDir := writeKubeconfigs(t, hosted)
	args := func(cmd, from string) []string {
		return append([]string{cmd, "--config", cfg, "--from", from, "--operator", cliOperator}, hostedKubeconfigFlags(kubeDir)...)
	}
	if stdout, stderr, err := cliRun(t, bin, args("apply", outputs(secret("idp-0-file-data"), secret("idp-1-file-data")))...); err != nil {
		t.Fatalf("apply: %v\n%s%s", err, stdout, stderr)
	}
	warning := "warning: secrets " + ns + "/idp-1-file-data: placed for " + cliOperator + " by an earlier run"
	tests := []struct {
		name     string
		from     string
		wantWarn bool
	}{
		{"one member no longer written", outputs(secret("idp-0-file-data")), true},
		{"both written again", outputs(secret("idp-0-file-data"), secret("idp-1-file-data")), false},
		{"none of the family written", outputs(mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", ns, "other",
			"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: "+ns+"}\n")), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, err := cliRun(t, bin, args("plan", tc.from)...)
			if err != nil {
				t.Fatalf("plan: %v\n%s%s", err, stdout, stderr)
			}
			if got := strings.Contains(stderr, warning); got != tc.wantWarn {
				t.Errorf("warns of idp-1-file-data: %v, want %v; stderr:\n%s", got, tc.wantWarn, stderr)
			}
			if strings.Contains(stderr, "idp-0-file-data: placed for") {
				t.Errorf("warns of idp-0-file-data, written again:\n%s", stderr)
			}
		})
	}
}
