package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/cmd/internal/cli/clitest"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/recovery"
	"github.com/topolayer/topolayer/routing"
)

const standaloneConfig = "../../examples/standalone.yaml"

// run executes the command line with args and returns stdout, stderr and the error.
func run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	return clitest.Execute(context.Background(), NewRootCommand, args...)
}

// bodyFiles returns the body files below dir, relative to it.
func bodyFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(d.Name(), "-body-") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestStandalonePlanCorpus: one entry per body file, each placed on the one cluster unchanged;
// with CAO's declarations, nothing is rejected.
func TestStandalonePlanCorpus(t *testing.T) {
	for _, c := range corpus.Cases(t) {
		t.Run(c.Name, func(t *testing.T) {
			args := []string{"plan", "--config", standaloneConfig, "--from", c.ExpectedOutput, "-o", "json", "--operator", c.Operator}
			if c.OutputResources != "" {
				args = append(args, "--output-resources", c.OutputResources)
			}
			stdout, _, err := run(t, args...)
			if err != nil {
				t.Fatal(err)
			}
			var plan plans.Plan
			if err := json.Unmarshal([]byte(stdout), &plan); err != nil {
				t.Fatalf("plan is not JSON: %v", err)
			}
			// The Deletes recovered from the operator's errors have no body file: CAO's corpus
			// names one, of an object it does not declare (dropped, with a warning).
			recovered := 0
			entries := slices.DeleteFunc(slices.Clone(plan.Entries), func(e plans.Entry) bool {
				if e.Provenance == "" {
					return false
				}
				recovered++
				if e.Disposition != routing.Dropped || e.Rule != recovery.Rule || len(e.Warnings) == 0 {
					t.Errorf("recovered %s: disposition %s, rule %s, warnings %q", e.Source, e.Disposition, e.Rule, e.Warnings)
				}
				return true
			})
			bodies := bodyFiles(t, c.ExpectedOutput)
			if len(entries) != len(bodies) {
				t.Fatalf("%d entries for %d body files", len(entries), len(bodies))
			}
			if plan.Topology != plans.TopologyStandalone || plan.Summary.Rejected != 0 || plan.Summary.Apply != len(bodies) || plan.Summary.Dropped != recovered {
				t.Fatalf("topology %q, summary %+v", plan.Topology, plan.Summary)
			}
			for _, e := range entries {
				if e.Target.Cluster != routing.ClusterStandalone || e.Target.Identity != e.Source || e.Disposition != routing.Apply {
					t.Errorf("%s: target %+v, disposition %s", e.Source, e.Target, e.Disposition)
				}
			}
		})
	}
}

// TestStandaloneTranslateCorpus: every body under <from>/<Class>/<Action>/... is found,
// byte-identical, under <to>/cluster/<Action>/... at the same relative path.
func TestStandaloneTranslateCorpus(t *testing.T) {
	for _, c := range corpus.Cases(t) {
		t.Run(c.Name, func(t *testing.T) {
			to := filepath.Join(t.TempDir(), "translated")
			args := []string{"translate", "--config", standaloneConfig, "--from", c.ExpectedOutput, "--to", to, "--metadata-name-key", string(c.NameKey), "--operator", c.Operator}
			if c.OutputResources != "" {
				args = append(args, "--output-resources", c.OutputResources)
			}
			if _, _, err := run(t, args...); err != nil {
				t.Fatal(err)
			}
			for _, rel := range bodyFiles(t, c.ExpectedOutput) {
				want, err := os.ReadFile(filepath.Join(c.ExpectedOutput, rel))
				if err != nil {
					t.Fatal(err)
				}
				_, inClass, _ := strings.Cut(rel, "/")
				got, err := os.ReadFile(filepath.Join(to, "cluster", inClass))
				if err != nil {
					t.Errorf("%s: %v", rel, err)
					continue
				}
				if !bytes.Equal(want, got) {
					t.Errorf("%s: body changed", rel)
				}
			}
			if _, err := os.Stat(filepath.Join(to, PlanFile)); err != nil {
				t.Errorf("no plan.json: %v", err)
			}
			// The translated folder is itself a mutation tree.
			ms, err := contract.ReadActionTree(filepath.Join(to, "cluster"), contract.ClassManagement, contract.ReadOptions{})
			if err != nil {
				t.Fatalf("translated tree does not read back: %v", err)
			}
			if len(ms) == 0 {
				t.Fatal("translated tree is empty")
			}
		})
	}
}

// TestMalformedInputsWriteNothing: for every malformed directory, plan and translate fail with
// an error naming the file, and translate creates nothing.
func TestMalformedInputsWriteNothing(t *testing.T) {
	for _, c := range contracttest.MalformedOutputDirs(t) {
		if c.Options.MaxFileSize != 0 || c.Options.MaxTotalSize != 0 {
			continue // needs a reader option the command line does not expose
		}
		t.Run(c.Name, func(t *testing.T) {
			if _, _, err := run(t, "plan", "--config", standaloneConfig, "--from", c.Dir); err == nil || !strings.Contains(err.Error(), filepath.Join(c.Dir, c.File)) {
				t.Fatalf("plan: %v", err)
			}
			to := filepath.Join(t.TempDir(), "translated")
			if _, _, err := run(t, "translate", "--config", standaloneConfig, "--from", c.Dir, "--to", to); err == nil {
				t.Fatal("translate succeeded")
			}
			if _, err := os.Stat(to); !os.IsNotExist(err) {
				t.Fatalf("translate created %s", to)
			}
		})
	}
}

// TestRejectedWritesNothing: one undeclared mutation fails plan and translate, and translate
// writes nothing.
func TestRejectedWritesNothing(t *testing.T) {
	dir := contracttest.WriteValidOutputDir(t, filepath.Join(t.TempDir(), "out"))
	declFile := withoutNamespaceDeclared(t)
	stdout, _, err := run(t, "plan", "--config", standaloneConfig, "--from", dir, "--output-resources", declFile)
	if err == nil || !strings.Contains(err.Error(), "1 of 8 mutations rejected") {
		t.Fatalf("plan: %v", err)
	}
	if !strings.Contains(stdout, "rejected") || !strings.Contains(stdout, plans.RuleDeclaredOutputs) || !strings.Contains(stdout, "REJECTED (1)") || strings.Count(stdout, "namespaces/openshift-sample") != 2 {
		t.Fatalf("the table does not show the rejection:\n%s", stdout)
	}
	to := filepath.Join(t.TempDir(), "translated")
	if _, _, err := run(t, "translate", "--config", standaloneConfig, "--from", dir, "--output-resources", declFile, "--to", to); err == nil {
		t.Fatal("translate succeeded")
	}
	if _, err := os.Stat(to); !os.IsNotExist(err) {
		t.Fatalf("translate created %s", to)
	}
}

func TestTranslateRefusesNonEmptyTarget(t *testing.T) {
	dir := contracttest.WriteValidOutputDir(t, filepath.Join(t.TempDir(), "out"))
	to := t.TempDir()
	keep := filepath.Join(to, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, "translate", "--config", standaloneConfig, "--from", dir, "--to", to); err == nil || !strings.Contains(err.Error(), "--overwrite") {
		t.Fatalf("want a refusal, got %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatal("existing content was touched")
	}
	if _, _, err := run(t, "translate", "--config", standaloneConfig, "--from", dir, "--to", to, "--overwrite"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(keep); !os.IsNotExist(err) {
		t.Fatal("--overwrite kept old content")
	}
}

func TestPlanFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no config", []string{"plan", "--from", "x"}, "--config is required"},
		{"no from", []string{"plan", "--config", standaloneConfig}, "--from is required"},
		{"bad output", []string{"plan", "--config", standaloneConfig, "--from", "x", "-o", "xml"}, `--output "xml"`},
		{"missing config", []string{"plan", "--config", "nope.yaml", "--from", "x"}, "nope.yaml"},
		{"translate without to", []string{"translate", "--config", standaloneConfig, "--from", "x"}, "--to is required"},
		{"bad name key", []string{"translate", "--config", standaloneConfig, "--from", "x", "--to", "y", "--metadata-name-key", "nom"}, "--metadata-name-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := run(t, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// TestEmptyOutputDirRefused: a directory with neither mutations nor controller-results.yaml
// is not planned as "0 mutations", by plan, parity or translate.
func TestEmptyOutputDirRefused(t *testing.T) {
	empty := t.TempDir()
	for name, args := range map[string][]string{
		"plan":      {"plan", "--config", standaloneConfig, "--from", empty},
		"translate": {"translate", "--config", standaloneConfig, "--from", empty, "--to", filepath.Join(t.TempDir(), "to")},
		"parity":    {"parity", "--config-standalone", standaloneConfig, "--config-hosted", hostedConfig, "--from", empty, "--operator", "x"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := run(t, args...); !errors.Is(err, errEmptyOutputDir) || !strings.Contains(err.Error(), empty) {
				t.Fatalf("error %v, want %v naming %s", err, errEmptyOutputDir, empty)
			}
		})
	}
}

// withoutNamespaceDeclared writes the valid output directory's declarations without its
// Namespace (contracttest.ValidOutputResources' first exact resource) and returns the file:
// one of its mutations is then undeclared.
func withoutNamespaceDeclared(t *testing.T) string {
	t.Helper()
	declared := contracttest.ValidOutputResources()
	declared.ManagementResources.ExactResources = declared.ManagementResources.ExactResources[1:]
	declFile := filepath.Join(t.TempDir(), "output-resources.yaml")
	data, err := contract.MarshalOutputResources(declared)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(declFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return declFile
}
