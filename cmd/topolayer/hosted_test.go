package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/routing"
)

const hostedConfig = "../../examples/hosted.yaml"

// TestHostedTranslateCorpus: translate writes management/ and guest/ folders that read back
// as mutation trees, holding exactly the plan's apply entries.
func TestHostedTranslateCorpus(t *testing.T) {
	for _, c := range corpus.CAOCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			to := filepath.Join(t.TempDir(), "translated")
			if _, _, err := run(t, "translate", "--config", hostedConfig, "--from", c.ExpectedOutput, "--output-resources", c.OutputResources, "--operator", c.Operator, "--to", to); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(to, PlanFile))
			if err != nil {
				t.Fatal(err)
			}
			var plan plans.Plan
			if err := json.Unmarshal(data, &plan); err != nil {
				t.Fatal(err)
			}
			want := map[string]int{}
			for _, e := range plan.Entries {
				if e.Disposition == routing.Apply {
					want[e.Target.Cluster]++
				}
			}
			for _, cluster := range []string{routing.ClusterManagement, routing.ClusterGuest} {
				dir := filepath.Join(to, cluster)
				if want[cluster] == 0 {
					if _, err := os.Stat(dir); !os.IsNotExist(err) {
						t.Errorf("%s exists with nothing to apply", cluster)
					}
					continue
				}
				ms, err := contract.ReadActionTree(dir, contract.ClassManagement, contract.ReadOptions{})
				if err != nil {
					t.Fatalf("%s: %v", cluster, err)
				}
				if len(ms) > want[cluster] || len(ms) == 0 {
					t.Errorf("%s: %d mutations on disk, %d apply entries", cluster, len(ms), want[cluster])
				}
				for _, m := range ms {
					if cluster == routing.ClusterManagement && m.Identity().Namespace != "clusters-example" {
						t.Errorf("%s: %s outside the HCP namespace", m.Path, m.Identity())
					}
				}
			}
		})
	}
}

func TestHostedPlanNeedsOperator(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	writeValid(t, dir)
	if _, _, err := run(t, "plan", "--config", hostedConfig, "--from", dir); err == nil || !strings.Contains(err.Error(), "operator's name") {
		t.Fatalf("want a request for --operator, got %v", err)
	}
}

func TestPlanDot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	writeValid(t, dir)
	stdout, _, err := run(t, "plan", "--config", hostedConfig, "--from", dir, "--operator", "sample", "-o", "dot")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"digraph plan {", `"op:sample" -> "class:Management"`, `"class:Management" -> "rule:hosted/management"`, `"rule:hosted/management" -> "cluster:management"`, `"rule:hosted/absorb-namespaces/Management" -> "disposition:absorbed"`, `"rule:hosted/user-workload" -> "cluster:guest"`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dot output lacks %s:\n%s", want, stdout)
		}
	}
}

func TestValidateCommand(t *testing.T) {
	stdout, _, err := run(t, "validate", "--config", hostedConfig)
	if err != nil || !strings.Contains(stdout, "valid: topology Hosted") {
		t.Fatalf("%v: %s", err, stdout)
	}
	broken := filepath.Join(t.TempDir(), "broken.yaml")
	if err := os.WriteFile(broken, []byte("apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\ntopology: {type: Hosted}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "validate", "--config", broken); err == nil || !strings.Contains(err.Error(), "topology.hosted") {
		t.Fatalf("got %v", err)
	}
}

func writeValid(t *testing.T, dir string) {
	t.Helper()
	if err := contract.WriteOutputDir(dir, &contract.OutputDir{Mutations: contracttest.ValidMutations()}, contract.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}
