package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/configtest"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/translate/declare"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/recovery"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
)

// TestPlanDeclarations: on the real cluster-authentication-operator's output (the corpus's
// minimal-cluster case; skipped without TOPOLAYER_CORPUS), the shipped hosted example refuses
// the rolebindingrestrictions CRD (privileged, not listed), and with one of the operator's
// Secrets moved under Unspecified (as CAO writes v4-0-config-system-custom-router-certs,
// which it does not declare) refuses that too. plan prints, after the table, the snippet that
// would place them, marked for review, naming the privilege it grants; -o yaml carries it as
// "declarations"; --no-hints leaves it out. The snippet decodes strictly as the
// configuration's types, and the plan made again with it merged refuses nothing.
func TestPlanDeclarations(t *testing.T) {
	const operator = "cluster-authentication-operator"
	var src string
	for _, c := range corpus.CAOCases(t) {
		if filepath.Base(c.Dir) == "minimal-cluster" {
			src = c.ExpectedOutput
		}
	}
	if src == "" {
		t.Skip("the corpus has no cluster-authentication-operator minimal-cluster case")
	}
	// The same output, with the branding Secret written under Unspecified.
	unspecified := t.TempDir()
	if err := os.CopyFS(unspecified, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	from := filepath.Join(unspecified, "Management", "Create", "namespaces", "openshift-authentication", "core", "secrets")
	to := filepath.Join(unspecified, "Unspecified", "Create", "namespaces", "openshift-authentication", "core", "secrets")
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"4034-body-v4-0-config-system-ocp-branding-template.yaml", "4034-metadata-v4-0-config-system-ocp-branding-template.yaml"} {
		if err := os.Rename(filepath.Join(from, f), filepath.Join(to, f)); err != nil {
			t.Fatal(err)
		}
	}

	tests := map[string]struct {
		from string
		// want are parts of the table's notes; the snippet must name each of wantDeclared.
		want, wantDeclared []string
	}{
		"a privileged CRD the policy does not list": {from: src,
			want: []string{"DECLARATIONS: review before adding", "PRIVILEGES (1)",
				"grants operator cluster-authentication-operator a privilege on the guest cluster: to write a CustomResourceDefinition"},
			wantDeclared: []string{"rolebindingrestrictions.authorization.openshift.io"}},
		"and a Secret written under Unspecified": {from: unspecified,
			want:         []string{"DECLARATIONS: review before adding", "written under Unspecified; declared as Management, as the operator's other outputs in openshift-authentication; it lands on the management cluster"},
			wantDeclared: []string{"rolebindingrestrictions.authorization.openshift.io", "v4-0-config-system-ocp-branding-template"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := []string{"plan", "--config", caoHostedConfig, "--from", tc.from, "--operator", operator}
			out, _, err := run(t, args...)
			if err == nil {
				t.Fatal("plan succeeded; want the rejection")
			}
			for _, w := range tc.want {
				if !strings.Contains(oneLine(out), w) {
					t.Errorf("the table's notes lack %q:\n%s", w, out)
				}
			}
			if strings.Index(out, "DECLARATIONS:") < strings.Index(out, "REJECTED (") {
				t.Errorf("the declarations come before the rejected entries:\n%s", out)
			}
			quiet, _, _ := run(t, append(args, "--no-hints")...)
			if strings.Contains(quiet, "DECLARATIONS") || strings.Contains(quiet, "hint:") {
				t.Errorf("--no-hints still prints hints or declarations:\n%s", quiet)
			}

			doc, _, _ := run(t, append(args, "-o", "yaml")...)
			var got struct {
				Entries      []plans.Entry         `json:"entries"`
				Declarations *declare.Declarations `json:"declarations"`
			}
			if err := yaml.Unmarshal([]byte(doc), &got); err != nil {
				t.Fatal(err)
			}
			if got.Declarations == nil || got.Declarations.Snippet == nil {
				t.Fatalf("-o yaml has no declarations:\n%s", doc)
			}
			snippet, err := got.Declarations.YAML()
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.wantDeclared {
				if !strings.Contains(string(snippet), w) {
					t.Errorf("the snippet does not declare %s:\n%s", w, snippet)
				}
			}
			fragment, err := config.Decode(snippet)
			if err != nil {
				t.Fatalf("the snippet does not decode as a configuration: %v\n%s", err, snippet)
			}
			cfg, err := config.Load(caoHostedConfig)
			if err != nil {
				t.Fatal(err)
			}
			merged := configtest.MergeFragment(t, cfg, fragment)
			if errs := config.Validate(merged); len(errs) > 0 {
				t.Fatalf("the example with the snippet merged is invalid: %v", errs.ToAggregate())
			}
			engine, err := topology.Engine(merged, operator, nil)
			if err != nil {
				t.Fatal(err)
			}
			dir, err := contract.ReadOutputDir(tc.from, contract.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range engine.Plan(dir).Entries {
				if e.Rule == recovery.Rule && e.Disposition == routing.Dropped {
					// A Delete recovered from a controller's refusal that matches no declared
					// output: a warning, not a refusal, and nothing the snippet declares.
					continue
				}
				if e.Disposition == routing.Rejected || e.Class == contract.ClassUnspecified {
					t.Errorf("with the snippet merged, #%d %s is %s (%s) in class %s: %s", i, e.Source, e.Disposition, e.Rule, e.Class, e.Reason)
				}
			}
		})
	}
}
