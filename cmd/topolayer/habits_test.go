package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/cmd/internal/cli"
)

// runCLI runs the command line args as main does, and returns its exit status and streams.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	status := runMain(IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args, nil, stopGrace)
	return status, out.String(), errOut.String()
}

// kubectl's habits: a mistyped command, subcommand or flag is a usage error (2) that
// suggests what was meant; a missing required flag reads the same in every command.
func TestTyposAreUsageErrorsWithSuggestions(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want []string
	}{
		"command":            {[]string{"plann"}, []string{`unknown command "plann" for "topolayer"`, "Did you mean this?\n\tplan"}},
		"swapped letters":    {[]string{"tset"}, []string{"Did you mean this?\n\ttest"}},
		"subcommand":         {[]string{"test", "apply-configuratio"}, []string{`unknown command "apply-configuratio" for "topolayer test"`, "\tapply-configuration"}},
		"flag":               {[]string{"plan", "--confg", "x"}, []string{"unknown flag: --confg", "Did you mean this?\n\t--config"}},
		"run without config": {[]string{"run"}, []string{"error: --config is required\n"}},
		"plan without flags": {[]string{"plan"}, []string{"--config is required", "--from is required"}},
	} {
		t.Run(name, func(t *testing.T) {
			status, _, errOut := runCLI(t, tc.args...)
			if status != cli.ExitUsage {
				t.Errorf("exit status %d, want %d; stderr:\n%s", status, cli.ExitUsage, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, errOut)
				}
			}
			if !strings.Contains(errOut, "See 'topolayer") {
				t.Errorf("stderr does not point to the help:\n%s", errOut)
			}
		})
	}
}

// The root alone prints its help and succeeds, as kubectl does.
func TestRootAlonePrintsHelp(t *testing.T) {
	status, out, _ := runCLI(t)
	if status != cli.ExitOK || !strings.Contains(out, "Available Commands") {
		t.Errorf("status %d, stdout:\n%s", status, out)
	}
}

// --kubeconfig, --context and -v are global: any command takes them, before or after its name.
func TestGlobalFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--kubeconfig", "k", "--context", "c", "-v", "2", "version"},
		{"version", "--kubeconfig", "k", "--context", "c", "-v", "2"},
		{"-v=1", "validate", "--config", "../../examples/standalone.yaml"},
	} {
		if status, _, errOut := runCLI(t, args...); status != cli.ExitOK {
			t.Errorf("%q: status %d:\n%s", args, status, errOut)
		}
	}
	// A command that talks to a cluster takes the global flag before its name as its own.
	status, _, errOut := runCLI(t, "--kubeconfig", filepath.Join(t.TempDir(), "absent"), "plan",
		"--config", "../../examples/standalone.yaml", "--from", "../../examples/outputs/sample-operator")
	if status != cli.ExitFailed || !strings.Contains(errOut, "--kubeconfig") {
		t.Errorf("status %d, want a failure naming --kubeconfig:\n%s", status, errOut)
	}
}

func TestVersionClient(t *testing.T) {
	status, out, errOut := runCLI(t, "version", "--client", "-o", "jsonpath={.module}")
	if status != cli.ExitOK || out != "github.com/topolayer/topolayer" {
		t.Errorf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
}

func TestPlanNameAndJSONPath(t *testing.T) {
	plan := func(config string, o string) string {
		t.Helper()
		status, out, errOut := runCLI(t, "plan", "--config", "../../examples/"+config, "--from", "../../examples/outputs/sample-operator", "--operator", "sample-operator", "-o", o)
		if status != cli.ExitOK {
			t.Fatalf("status %d:\n%s", status, errOut)
		}
		return out
	}
	// Standalone: one cluster, namespaced objects in two namespaces.
	names := plan("standalone.yaml", "name")
	for _, w := range []string{"-n openshift-sample deployments.apps/sample\n", "\nclusterroles.rbac.authorization.k8s.io/system:openshift:sample\n"} {
		if !strings.Contains(names, w) {
			t.Errorf("standalone -o name does not contain %q:\n%s", w, names)
		}
	}
	// Hosted: two clusters.
	names = plan("hosted.yaml", "name")
	for _, w := range []string{"management: -n clusters-example deployments.apps/openshift-sample--sample\n", "guest: -n openshift-sample serviceaccounts/sample\n"} {
		if !strings.Contains(names, w) {
			t.Errorf("hosted -o name does not contain %q:\n%s", w, names)
		}
	}
	if got := plan("standalone.yaml", "jsonpath={.summary.apply}"); got != "14" {
		t.Errorf("-o jsonpath={.summary.apply}: %q", got)
	}
	if got := plan("standalone.yaml", "jsonpath=.summary.rejected"); got != "0" {
		t.Errorf("-o jsonpath=.summary.rejected: %q", got)
	}
	if status, _, errOut := runCLI(t, "plan", "--config", "x", "--from", "y", "-o", "jsonpath="); status != cli.ExitUsage {
		t.Errorf("empty jsonpath: status %d:\n%s", status, errOut)
	}
}

// The shell completes the values of -o and of --preserve-policy.
func TestCompletionOfFlagValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "plan", "-o", ""}, []string{"table", "wide", "name", "json", "yaml", "dot", "jsonpath="}},
		{[]string{"__complete", "version", "-o", ""}, []string{"json", "yaml", "jsonpath="}},
		{[]string{"__complete", "test", "apply-configuration", "--preserve-policy", ""}, []string{"KeepAlways", "ReplaceExpectedOutput"}},
		{[]string{"__complete", "run", "--log-format", ""}, []string{"console", "json"}},
		{[]string{"__complete", "test", "determinism", "-o", ""}, []string{"table", "json", "yaml"}},
	} {
		_, out, _ := runCLI(t, tc.args...)
		got, _, _ := strings.Cut(out, "\n:")
		if want := strings.Join(tc.want, "\n"); got != want {
			t.Errorf("%q: completions %q, want %q", tc.args, got, want)
		}
	}
	// Every -o flag lists its values.
	root := NewRootCommand(IOStreams{})
	for _, c := range append(root.Commands(), root) {
		if f := c.LocalFlags().Lookup("output"); f != nil && len(outputFormats(f.Usage)) == 0 {
			t.Errorf("%s: -o does not list its formats after \"output format: \": %q", c.CommandPath(), f.Usage)
		}
	}
}

// A server plan could not reach gets no LIVE column: plan says it is unreachable and fails.
func TestPlanUnreachableServer(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: x}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	status, out, errOut := runCLI(t, "plan", "--config", "../../examples/standalone.yaml", "--from", "../../examples/outputs/sample-operator", "--kubeconfig", kubeconfig)
	if status != cli.ExitFailed {
		t.Errorf("status %d, want %d", status, cli.ExitFailed)
	}
	if strings.Contains(out, "LIVE") || strings.Contains(out, "valid") {
		t.Errorf("stdout has live results of a server never reached:\n%s", out)
	}
	if !strings.Contains(errOut, "unreachable") || strings.Contains(errOut, "Unhandled Error") {
		t.Errorf("stderr does not say unreachable, or has klog lines:\n%s", errOut)
	}
}
