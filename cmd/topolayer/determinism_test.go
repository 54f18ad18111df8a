package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/internal/mom/determinism"
)

// runDeterminism runs `topolayer test determinism` with args as main would, and returns the
// exit status, stdout and stderr.
func runDeterminism(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCLI(t, append([]string{"test", "determinism"}, args...)...)
}

func TestDeterminismFlags(t *testing.T) {
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no flags":     {nil, "--operator-binary is required"},
		"one run":      {[]string{"--operator-binary", "x", "--input-dir", ".", "--runs", "1"}, "--runs 1: at least 2 runs"},
		"bad now":      {[]string{"--operator-binary", "x", "--input-dir", ".", "--now", "yesterday"}, `--now "yesterday": not RFC 3339`},
		"bad format":   {[]string{"--operator-binary", "x", "--input-dir", ".", "-o", "wide"}, `-o "wide": must be one of table, json, yaml`},
		"zero timeout": {[]string{"--operator-binary", "x", "--input-dir", ".", "--timeout", "0s"}, "--timeout 0s: must be positive"},
	} {
		t.Run(name, func(t *testing.T) {
			status, _, errOut := runDeterminism(t, tc.args...)
			if status != cli.ExitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit status %d, stderr %q; want %d and %q", status, errOut, cli.ExitUsage, tc.want)
			}
		})
	}
}

// TestDeterminismSampleOperator: the sample operator writes the same in every run.
func TestDeterminismSampleOperator(t *testing.T) {
	bin := buildSampleOperators(t)
	status, out, errOut := runDeterminism(t, "--operator-binary", filepath.Join(bin, "sample-operator"),
		"--input-dir", exampleInputDir, "--runs", "3", "--now", "2024-10-14T22:38:20Z")
	if status != cli.ExitOK {
		t.Fatalf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", status, cli.ExitOK, out, errOut)
	}
	if want := "0 of 2 controllers differ across 3 runs (--now 2024-10-14T22:38:20Z)\n"; out != want {
		t.Errorf("stdout %q, want %q", out, want)
	}
}

// TestDeterminismInterrupt: canceling the context (Ctrl-C) stops the run in progress.
func TestDeterminismInterrupt(t *testing.T) {
	op := filepath.Join(t.TempDir(), "slow-operator")
	if err := os.WriteFile(op, []byte("#!/bin/sh\nsleep 60\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(500*time.Millisecond, cancel)
	var out, errOut bytes.Buffer
	cmd := NewCmdTest(IOStreams{Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"determinism", "--operator-binary", op, "--input-dir", t.TempDir(), "--timeout", "1m"})
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	start := time.Now()
	err := cmd.ExecuteContext(ctx)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %s to stop after the cancel", took)
	}
	if err == nil || !strings.Contains(err.Error(), "run 1") || !strings.Contains(err.Error(), "canceled") {
		t.Errorf("error %v, want the first run canceled", err)
	}
}

// TestDeterminismCAO runs the real cluster-authentication-operator on a corpus input with an
// htpasswd identity provider: its resource syncer copies the provider's secret only in the
// runs where it comes after the config observer that registers the copy, so the check names
// it. The two controllers alone: about 0.3 s a run.
func TestDeterminismCAO(t *testing.T) {
	cao, corpusInput := caoAndConfigObserverInput(t)
	in := caoInputWithIdentityProvider(t, corpusInput)

	// Only the two controllers whose order matters run (about 0.3 s a run): both orders are
	// missing from 24 runs with a probability of 2^-23.
	const runs = 24
	start := time.Now()
	status, out, errOut := runDeterminism(t, "--operator-binary", cao, "--input-dir", in,
		"--runs", strconv.Itoa(runs), "--now", "2025-08-07T22:38:20Z", "--controllers", "TODO-resourceSyncer,TODO-configObserver", "-o", "json")
	t.Logf("%d runs in %s", runs, time.Since(start).Round(time.Millisecond))
	if status != cli.ExitFailed {
		t.Fatalf("exit status %d, want %d (a controller differs)\nstderr:\n%s", status, cli.ExitFailed, errOut)
	}
	var report determinism.Report
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("-o json: %v\n%s", err, out)
	}
	var syncer *determinism.Controller
	for i, c := range report.Nondeterministic {
		t.Logf("%s: %d/%d runs differ, %d objects, e.g. %s %s: %s", c.Name, c.RunsDiffering, report.Runs, len(c.Objects), c.Objects[0].Action, c.Objects[0].Object, c.Objects[0].Difference)
		if c.Name == "TODO-resourceSyncer" {
			syncer = &report.Nondeterministic[i]
		}
	}
	if syncer == nil {
		t.Fatalf("the resource syncer is not named; the report:\n%s", out)
	}
	found := false
	for _, o := range syncer.Objects {
		if o.Object == "secrets openshift-authentication/v4-0-config-user-idp-0-file-data" && len(o.WrittenIn) > 0 && len(o.NotWrittenIn) > 0 {
			found = true
		}
	}
	if !found {
		t.Errorf("the resource syncer's difference is not the identity provider's secret, written in some runs only: %+v", syncer.Objects)
	}
	if !strings.Contains(errOut, "TODO-resourceSyncer") {
		t.Errorf("stderr does not name the resource syncer:\n%s", errOut)
	}
}

// caoInputWithIdentityProvider copies a corpus input directory of the
// cluster-authentication-operator and adds an htpasswd identity provider: in
// config.openshift.io oauths/cluster, with its Secret htpass-secret in openshift-config.
func caoInputWithIdentityProvider(t *testing.T, corpusInput string) string {
	t.Helper()
	in := filepath.Join(t.TempDir(), "input-dir")
	// cp keeps the corpus's read-only modes; chmod makes the copy writable.
	for _, argv := range [][]string{{"cp", "-R", corpusInput, in}, {"chmod", "-R", "u+w", in}} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	oauths := filepath.Join(in, "cluster-scoped-resources", "config.openshift.io", "oauths.yaml")
	data, err := os.ReadFile(oauths)
	if err != nil {
		t.Fatal(err)
	}
	const idp = "  spec:\n    identityProviders:\n    - name: developers\n      mappingMethod: claim\n      type: HTPasswd\n" +
		"      htpasswd:\n        fileData:\n          name: htpass-secret\n"
	withIDP := strings.Replace(string(data), "  spec: {}\n", idp, 1)
	if withIDP == string(data) {
		t.Fatalf("%s: no empty spec to give an identity provider", oauths)
	}
	secrets := filepath.Join(in, "namespaces", "openshift-config", "core", "secrets.yaml")
	const secret = "apiVersion: v1\nkind: SecretList\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata:\n    name: htpass-secret\n" +
		"    namespace: openshift-config\n  type: Opaque\n  data:\n" +
		"    htpasswd: ZGV2ZWxvcGVyOiQyeSQwNSRqaDl1Ym1OL2huWnVNT2QyUEllU2EueVJnd0E2ZjR6TFBxWFZSdjEudDZmUlRqblB4em9IMgo=\n"
	for _, f := range []struct{ path, data string }{{oauths, withIDP}, {secrets, secret}} {
		if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f.path, []byte(f.data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return in
}

// caoAndConfigObserverInput returns the real cluster-authentication-operator binary
// (TOPOLAYER_OPERATORS) and the corpus input of its oauth-server-configobserver case
// (TOPOLAYER_CORPUS), skipping the test, saying which, when either is absent, and with
// -short, since the test then runs the operator.
func caoAndConfigObserverInput(t *testing.T) (cao, input string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the cluster-authentication-operator")
	}
	cao = filepath.Join(os.Getenv("TOPOLAYER_OPERATORS"), "cluster-authentication-operator")
	if os.Getenv("TOPOLAYER_OPERATORS") == "" {
		t.Skip("TOPOLAYER_OPERATORS is unset: no cluster-authentication-operator binary (.ci/run sets it)")
	}
	if _, err := os.Stat(cao); err != nil {
		t.Skipf("TOPOLAYER_OPERATORS=%s lacks the cluster-authentication-operator: %v", os.Getenv("TOPOLAYER_OPERATORS"), err)
	}
	input = filepath.Join(os.Getenv("TOPOLAYER_CORPUS"), "cluster-authentication-operator", "test-data", "apply-configuration", "overall", "oauth-server-configobserver", "input-dir")
	if os.Getenv("TOPOLAYER_CORPUS") == "" || !isDirectory(input) {
		t.Skipf("TOPOLAYER_CORPUS=%q holds no cluster-authentication-operator oauth-server-configobserver input", os.Getenv("TOPOLAYER_CORPUS"))
	}
	return cao, input
}
