package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const shadowingConfig = `apiVersion: topolayer.dev/v1alpha1
kind: TopologyConfig
topology:
  type: Standalone
routing:
  rules:
  - {name: the-cluster, match: {}, cluster: cluster}
`

// TestValidateOutput: -o json and yaml list each error with its field path, also when the
// file is invalid, and the warnings of a valid file; the default output says valid.
func TestValidateOutput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	broken := write("broken.yaml", "apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\ntopology: {type: Standalone}\nrouting:\n  rules:\n  - {match: {resource: Secret}, cluster: cluster}\n")
	twoDocs := write("two.yaml", shadowingConfig+"---\n"+shadowingConfig)
	shadowed := write("shadowed.yaml", shadowingConfig)
	operator := func(command string) string {
		return "apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\ntopology: {type: Standalone}\noperators:\n- {name: op, command: [" + command + "]}\n"
	}
	missing := write("missing.yaml", operator("./no-such-operator"))
	notOnPath := write("not-on-path.yaml", operator("no-such-operator-on-path"))
	notExecutable := write("not-executable.yaml", operator("./missing.yaml"))
	tests := map[string]struct {
		args       []string
		wantErr    bool
		wantFields []string // field paths of the errors, in order
		wantText   []string // substrings of stdout
		wantStderr []string
	}{
		"json errors":                            {args: []string{"--config", broken, "-o", "json"}, wantErr: true, wantFields: []string{"routing.rules[0].name", "routing.rules[0].match.resource", "routing.rules[0].match.resource"}},
		"yaml errors":                            {args: []string{"--config", broken, "-o", "yaml"}, wantErr: true, wantFields: []string{"routing.rules[0].name", "routing.rules[0].match.resource", "routing.rules[0].match.resource"}},
		"two documents":                          {args: []string{"--config", twoDocs, "-o", "json"}, wantErr: true, wantFields: []string{""}, wantText: []string{"document 2", "has 2"}},
		"shadowed rule":                          {args: []string{"--config", shadowed}, wantText: []string{"valid: topology Standalone"}, wantStderr: []string{"warning: " + shadowed + ": routing.rules[0] (the-cluster): ties with the built-in rule standalone"}},
		"an operator binary that does not exist": {args: []string{"--config", missing, "-o", "json"}, wantErr: true, wantFields: []string{"operators[0].command[0]"}, wantText: []string{"./no-such-operator"}},
		"an operator command that is not executable": {args: []string{"--config", notExecutable, "-o", "json"}, wantErr: true, wantFields: []string{"operators[0].command[0]"}, wantText: []string{"not an executable file"}},
		"an operator command not in PATH here": {args: []string{"--config", notOnPath}, wantText: []string{"valid: topology Standalone"},
			wantStderr: []string{"warning: " + notOnPath + ": operators[0].command[0]: no-such-operator-on-path is not in PATH here"}},
		"shadowed in json": {args: []string{"--config", shadowed, "-o", "json"}, wantFields: []string{}, wantText: []string{`"valid": true`, `"warnings": [`, "the-cluster"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, stderr, err := run(t, append([]string{"validate"}, tc.args...)...)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v, want one: %v", err, tc.wantErr)
			}
			for _, w := range tc.wantText {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tc.wantStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if tc.wantFields == nil {
				return
			}
			js := []byte(stdout)
			if tc.args[len(tc.args)-1] == "yaml" {
				if js, err = yaml.YAMLToJSON(js); err != nil {
					t.Fatal(err)
				}
			}
			var res ValidationResult
			if err := json.Unmarshal(js, &res); err != nil {
				t.Fatalf("%v:\n%s", err, stdout)
			}
			var fields []string
			for _, e := range res.Errors {
				fields = append(fields, e.Field)
				if e.Message == "" {
					t.Errorf("error without a message: %+v", e)
				}
			}
			if strings.Join(fields, ",") != strings.Join(tc.wantFields, ",") || res.Valid != !tc.wantErr {
				t.Errorf("fields %q, valid %v; want %q:\n%s", fields, res.Valid, tc.wantFields, stdout)
			}
		})
	}
}

// TestPlanWarnsShadowedRules: plan says on stderr that a configured rule is shadowed.
func TestPlanWarnsShadowedRules(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "shadowed.yaml")
	if err := os.WriteFile(cfg, []byte(shadowingConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := run(t, "plan", "--config", cfg, "--from", "../../examples/outputs/sample-operator", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr, "warning: "+cfg+": routing.rules[0] (the-cluster): ties with the built-in rule") {
		t.Errorf("stderr:\n%s", stderr)
	}
}
