package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/topolayer/topolayer/hosted/openshiftapi"
	"github.com/topolayer/topolayer/hosted/shadow"
)

// shadowTestCRDs are the openshift/api CRDs the shadow-crds tests start from.
var shadowTestCRDs = []string{
	"authentications.operator.openshift.io",
	"clusteroperators.config.openshift.io",
	"ingresses.config.openshift.io",
}

// shadowOpenShiftAPIFile returns the Default manifest of one openshift/api CRD.
func shadowOpenShiftAPIFile(t *testing.T, name string) string {
	t.Helper()
	f, err := openshiftapi.CRDFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// runShadowCRDs runs `topolayer shadow-crds` with args and returns stdout, stderr and the
// error.
func runShadowCRDs(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewCmdShadowCRDs(IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	return out.String(), errOut.String(), err
}

// shadowCRDDir copies the named openshift/api CRDs, and extra files, into a fresh directory.
func shadowCRDDir(t *testing.T, crds []string, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range crds {
		data, err := os.ReadFile(shadowOpenShiftAPIFile(t, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".crd.yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range extra {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// dirNames returns the names of the entries of dir, or nil when it does not exist.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestShadowCRDsOpenShiftAPI: the three openshift/api CRDs give three valid shadows, one
// file and one line each, equal to what the shadow package builds.
func TestShadowCRDsOpenShiftAPI(t *testing.T) {
	to := filepath.Join(t.TempDir(), "shadows")
	args := []string{"--to", to}
	for _, name := range shadowTestCRDs {
		args = append(args, "--from", shadowOpenShiftAPIFile(t, name))
	}
	stdout, stderr, err := runShadowCRDs(t, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var wantLines, wantFiles []string
	for _, name := range shadowTestCRDs {
		file := name + ".shadow.topolayer.dev.yaml"
		wantFiles = append(wantFiles, file)
		wantLines = append(wantLines, fmt.Sprintf("wrote %s (shadow of %s)", filepath.Join(to, file), name))
	}
	if diff := cmp.Diff(strings.Join(wantLines, "\n")+"\n", stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if stderr != "" {
		t.Errorf("stderr: %s", stderr)
	}
	if diff := cmp.Diff(wantFiles, dirNames(t, to)); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	for _, name := range shadowTestCRDs {
		t.Run(name, func(t *testing.T) {
			orig, err := shadow.ReadCRDs(shadowOpenShiftAPIFile(t, name))
			if err != nil {
				t.Fatal(err)
			}
			want, err := shadow.CRD(orig[0])
			if err != nil {
				t.Fatal(err)
			}
			got, err := shadow.ReadCRDs(filepath.Join(to, name+".shadow.topolayer.dev.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 {
				t.Fatalf("%d CRDs in the file", len(got))
			}
			if diff := cmp.Diff(want, got[0]); diff != "" {
				t.Errorf("written shadow (-want +got):\n%s", diff)
			}
			if err := shadow.Validate(got[0]); err != nil {
				t.Error(err)
			}
			if got[0].Spec.Scope != apiextensionsv1.NamespaceScoped || got[0].Labels[shadow.LabelShadowOf] != name {
				t.Errorf("scope %q, labels %v", got[0].Spec.Scope, got[0].Labels)
			}
		})
	}
}

// TestShadowCRDsSelect: from a directory, every cluster-scoped CRD or those named by --name.
func TestShadowCRDsSelect(t *testing.T) {
	const namespaced = "podnetworkconnectivitychecks.controlplane.operator.openshift.io"
	dir := shadowCRDDir(t, append(shadowTestCRDs[:3:3], namespaced), map[string]string{"README.md": "not a manifest"})
	tests := map[string]struct {
		names      []string
		wantFiles  []string
		wantStderr string
		wantErr    string
	}{
		"all cluster-scoped": {
			wantFiles: []string{
				"authentications.operator.openshift.io.shadow.topolayer.dev.yaml",
				"clusteroperators.config.openshift.io.shadow.topolayer.dev.yaml",
				"ingresses.config.openshift.io.shadow.topolayer.dev.yaml",
			},
			wantStderr: fmt.Sprintf("skipped %s (%s): namespaced\n", namespaced, filepath.Join(dir, namespaced+".crd.yaml")),
		},
		"by name": {
			names:     []string{"clusteroperators.config.openshift.io"},
			wantFiles: []string{"clusteroperators.config.openshift.io.shadow.topolayer.dev.yaml"},
		},
		"a namespaced name": {
			names:   []string{"clusteroperators.config.openshift.io", namespaced},
			wantErr: fmt.Sprintf("%s: crd %s: namespaced: only cluster-scoped kinds get shadows", filepath.Join(dir, namespaced+".crd.yaml"), namespaced),
		},
		"an unknown name": {
			names:   []string{"widgets.example.com"},
			wantErr: "--name widgets.example.com: no such CRD in --from",
		},
		"not a name": {
			names:   []string{"Widgets"},
			wantErr: `--name "Widgets": not a CRD name`,
		},
	}
	for tn, tc := range tests {
		t.Run(tn, func(t *testing.T) {
			to := filepath.Join(t.TempDir(), "shadows")
			args := []string{"--from", dir, "--to", to}
			for _, n := range tc.names {
				args = append(args, "--name", n)
			}
			stdout, stderr, err := runShadowCRDs(t, args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if names := dirNames(t, to); names != nil {
					t.Errorf("wrote %v despite the error", names)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantFiles, dirNames(t, to)); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
			if got := strings.Count(stdout, "\n"); got != len(tc.wantFiles) {
				t.Errorf("%d lines for %d files:\n%s", got, len(tc.wantFiles), stdout)
			}
			if stderr != tc.wantStderr {
				t.Errorf("stderr %q, want %q", stderr, tc.wantStderr)
			}
		})
	}
}

// TestShadowCRDsWritesNothingOnError: a bad input, an invalid shadow or a clash writes
// nothing, and the error says where.
func TestShadowCRDsWritesNothingOnError(t *testing.T) {
	clusterOperators := shadowOpenShiftAPIFile(t, "clusteroperators.config.openshift.io")
	good, err := os.ReadFile(clusterOperators)
	if err != nil {
		t.Fatal(err)
	}
	invalid := strings.Replace(string(good), "scope: Cluster", "scope: Cluster\n  preserveUnknownFields: true", 1)
	dir := shadowCRDDir(t, nil, map[string]string{
		"mixed.yaml":   string(good) + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
		"invalid.yaml": invalid,
		"copy.yaml":    string(good),
	})
	tests := map[string]struct {
		from    []string
		wantErr []string
	}{
		"a document that is not a CRD": {
			from:    []string{filepath.Join(dir, "mixed.yaml")},
			wantErr: []string{filepath.Join(dir, "mixed.yaml") + `: document 2: apiVersion "v1", kind "ConfigMap": not a CustomResourceDefinition`},
		},
		"an invalid shadow": {
			from:    []string{filepath.Join(dir, "invalid.yaml")},
			wantErr: []string{filepath.Join(dir, "invalid.yaml") + ": shadow of clusteroperators.config.openshift.io: crd clusteroperators.config.openshift.io.shadow.topolayer.dev: ", "spec.preserveUnknownFields"},
		},
		"a CRD in two files": {
			from:    []string{clusterOperators, filepath.Join(dir, "copy.yaml")},
			wantErr: []string{"crd clusteroperators.config.openshift.io: defined in both " + clusterOperators + " and " + filepath.Join(dir, "copy.yaml")},
		},
		"no such file": {
			from:    []string{filepath.Join(dir, "missing.yaml")},
			wantErr: []string{"--from: ", "missing.yaml: no such file or directory"},
		},
	}
	for tn, tc := range tests {
		t.Run(tn, func(t *testing.T) {
			to := filepath.Join(t.TempDir(), "shadows")
			args := []string{"--to", to}
			for _, f := range tc.from {
				args = append(args, "--from", f)
			}
			_, _, err := runShadowCRDs(t, args...)
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if names := dirNames(t, filepath.Dir(to)); names != nil {
				t.Errorf("wrote %v despite the error", names)
			}
		})
	}
}

// TestShadowCRDsTarget: --to must be empty unless --overwrite, which replaces it whole.
func TestShadowCRDsTarget(t *testing.T) {
	from := shadowOpenShiftAPIFile(t, "clusteroperators.config.openshift.io")
	to := t.TempDir()
	if err := os.WriteFile(filepath.Join(to, "stale.yaml"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runShadowCRDs(t, "--from", from, "--to", to)
	if err == nil || !strings.Contains(err.Error(), "--to "+to+": directory is not empty (use --overwrite to replace it)") {
		t.Fatalf("error %v", err)
	}
	if _, _, err := runShadowCRDs(t, "--from", from, "--to", to, "--overwrite"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"clusteroperators.config.openshift.io.shadow.topolayer.dev.yaml"}, dirNames(t, to)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if names := dirNames(t, filepath.Dir(to)); len(names) != 1 {
		t.Errorf("left beside --to: %v", names)
	}
}

// TestShadowCRDsFlags: Validate names the flag, without side effects.
func TestShadowCRDsFlags(t *testing.T) {
	dir := t.TempDir()
	tests := map[string]struct {
		opts    ShadowCRDsOptions
		wantErr []string
	}{
		"nothing":          {wantErr: []string{"--from is required", "--to is required"}},
		"--to holds input": {opts: ShadowCRDsOptions{From: []string{filepath.Join(dir, "crds", "a.yaml")}, To: dir}, wantErr: []string{"--to " + dir + ": holds --from "}},
		"--to is input":    {opts: ShadowCRDsOptions{From: []string{dir}, To: dir + "/"}, wantErr: []string{"holds --from"}},
		"fine":             {opts: ShadowCRDsOptions{From: []string{dir}, To: dir + "-out", Names: []string{"a.example.com"}}},
		"--to beside":      {opts: ShadowCRDsOptions{From: []string{dir}, To: dir + "..out"}},
	}
	for tn, tc := range tests {
		t.Run(tn, func(t *testing.T) {
			o := tc.opts
			if err := o.Complete(); err != nil {
				t.Fatal(err)
			}
			checkErr(t, o.Validate(), tc.wantErr)
		})
	}
}

// TestShadowCRDsExample runs the topolayer invocations of the command's Example, with $api
// set as the Example sets it and /tmp/ moved to a test directory.
func TestShadowCRDsExample(t *testing.T) {
	shadowOpenShiftAPIFile(t, shadowTestCRDs[0]) // lets openshiftapi find the module
	api, err := openshiftapi.ModuleDir()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	example := strings.ReplaceAll(NewCmdShadowCRDs(IOStreams{}).Example, "\\\n", " ")
	runs := 0
	for _, line := range strings.Split(example, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "topolayer shadow-crds ")
		if !ok {
			continue
		}
		rest = strings.NewReplacer(`"`, "", "$api", api, "/tmp/", tmp+"/").Replace(rest)
		stdout, stderr, err := runShadowCRDs(t, strings.Fields(rest)...)
		if err != nil {
			t.Errorf("%s: %v\n%s", line, err, stderr)
		}
		if stdout == "" {
			t.Errorf("%s: wrote nothing", line)
		}
		runs++
	}
	if runs != 2 {
		t.Errorf("%d topolayer invocations in the Example, want 2", runs)
	}
	for _, want := range []string{
		"shadow-crds/authentications.operator.openshift.io.shadow.topolayer.dev.yaml",
		"scheduler-shadows/kubecontrollermanagers.operator.openshift.io.shadow.topolayer.dev.yaml",
	} {
		if _, err := os.Stat(filepath.Join(tmp, want)); err != nil {
			t.Error(err)
		}
	}
}
