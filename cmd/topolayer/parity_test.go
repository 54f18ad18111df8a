package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/translate/parity"
)

// runParity runs `topolayer parity` on its own command (it is registered in root.go) and
// returns stdout and the error.
func runParity(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := &cobra.Command{Use: "topolayer", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(NewCmdParity(IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}))
	root.SetArgs(append([]string{"parity"}, args...))
	err := root.Execute()
	return out.String(), err
}

func TestParityFlags(t *testing.T) {
	tests := map[string]struct {
		args    []string
		wantErr string
	}{
		"every required flag": {args: nil, wantErr: "--config-standalone is required\n--config-hosted is required\n--from is required\n--operator is required"},
		"an unknown format":   {args: []string{"-o", "xml"}, wantErr: `--output "xml": must be one of json|markdown|table|wide|yaml`},
		"the configs swapped": {
			args:    []string{"--config-standalone", hostedConfig, "--config-hosted", standaloneConfig, "--from", "../../examples/outputs/sample-operator", "--operator", "sample-operator"},
			wantErr: "--config-standalone ../../examples/hosted.yaml: topology Hosted is not Standalone",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := runParity(t, tc.args...)
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("got error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestParityHostedControlPlane: --hosted-control-plane gives the hosted configuration's
// hypershift profile the HostedControlPlane, as it does plan's.
func TestParityHostedControlPlane(t *testing.T) {
	dir := t.TempDir()
	hcp := func(name, policy string) string {
		path := filepath.Join(dir, name+".yaml")
		doc := "apiVersion: hypershift.openshift.io/v1beta1\nkind: HostedControlPlane\nmetadata: {namespace: clusters-example, name: " + name + "}\nspec: {controllerAvailabilityPolicy: " + policy + "}\n"
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	base := []string{
		"--config-standalone", standaloneConfig, "--config-hosted", hostedConfig,
		"--from", "../../examples/outputs/sample-operator", "--operator", "sample-operator",
	}
	other := hcp("other", "SingleReplica")
	tests := map[string]struct {
		file     string
		wantRows []string // rows of the summary, spaces collapsed
		wantErr  string
	}{
		"without it": {wantRows: []string{"transformed hypershift/pull-secret 1 1"}},
		"highly available": {file: hcp("example", "HighlyAvailable"), wantRows: []string{
			"transformed hypershift/pull-secret 1 1", "transformed hypershift/replicas-by-availability 5 1", "transformed hypershift/read-only-root-filesystem 4 1",
		}},
		"another HostedControlPlane": {file: other, wantErr: "--hosted-control-plane " + other + ": HostedControlPlane clusters-example/other is not the topology's clusters-example/example"},
		"no such file":               {file: filepath.Join(dir, "absent.yaml"), wantErr: "--hosted-control-plane: open " + filepath.Join(dir, "absent.yaml") + ": no such file or directory"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := base
			if tc.file != "" {
				args = append(slices.Clone(base), "--hosted-control-plane", tc.file)
			}
			out, err := runParity(t, args...)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("got error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parity: %v\n%s", err, out)
			}
			rows := map[string]bool{}
			for _, l := range strings.Split(out, "\n") {
				rows[strings.Join(strings.Fields(l), " ")] = true
			}
			for _, want := range tc.wantRows {
				if !rows[want] {
					t.Errorf("the summary lacks the row %q:\n%s", want, out)
				}
			}
			if tc.file == "" && strings.Contains(out, "replicas-by-availability") {
				t.Errorf("without --hosted-control-plane the profile sized the Deployment:\n%s", out)
			}
		})
	}
}

// TestParitySample: the sample operator's outputs, in each format.
func TestParitySample(t *testing.T) {
	base := []string{
		"--config-standalone", standaloneConfig, "--config-hosted", hostedConfig,
		"--from", "../../examples/outputs/sample-operator",
		"--output-resources", "../../examples/outputs/sample-operator-output-resources.yaml",
		"--operator", "sample-operator",
	}
	const summary = "13 objects: 4 identical, 2 renamed only, 5 transformed, 1 absorbed, 1 dropped, 0 unexplained"
	tests := map[string]func(t *testing.T, out string){
		"table": func(t *testing.T, out string) {
			if !strings.HasSuffix(out, "\nparity: "+summary+"\n") {
				t.Errorf("the summary does not end with the count %q:\n%s", summary, out)
			}
			rows := map[string]bool{}
			for _, l := range strings.Split(out, "\n") {
				rows[strings.Join(strings.Fields(l), " ")] = true
			}
			for _, want := range []string{"RESOURCE IDENTICAL RENAMED TRANSFORMED ABSORBED DROPPED REJECTED UNEXPLAINED", "deployments.apps 0 0 1 0 0 0 0",
				"CAUSE BY DIFFERENCES OBJECTS", "transformed hypershift/pull-secret 1 1"} {
				if !rows[want] {
					t.Errorf("the summary lacks the row %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "TRANSFORMED cluster:") {
				t.Errorf("the summary lists every object:\n%s", out)
			}
		},
		"wide": func(t *testing.T, out string) {
			if !strings.HasSuffix(out, "\nparity: "+summary+"\n") || !strings.Contains(out, "TRANSFORMED cluster: deployments.apps/openshift-sample/sample") {
				t.Errorf("the full table lacks an object or the count %q:\n%s", summary, out)
			}
		},
		"markdown": func(t *testing.T, out string) {
			if !strings.HasPrefix(out, "# Parity report: sample-operator\n\n**"+summary+"**\n") {
				t.Errorf("the document does not open with the count:\n%s", out)
			}
		},
		"json": func(t *testing.T, out string) {
			var r parity.Report
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatal(err)
			}
			if r.Summary.String() != summary {
				t.Errorf("summary %q, want %q", r.Summary, summary)
			}
		},
	}
	for format, check := range tests {
		t.Run(format, func(t *testing.T) {
			out, err := runParity(t, append(base, "-o", format)...)
			if err != nil {
				t.Fatal(err)
			}
			check(t, out)
		})
	}
}

// hostedRejection is parity's error when the hosted plan rejects one entry.
var hostedRejection = regexp.MustCompile(`--config-hosted: 1 of \d+ mutations rejected`)

// TestParityRejectedFails: parity exits non-zero when a plan rejects an entry, as plan does,
// and shows the rejected object once.
func TestParityRejectedFails(t *testing.T) {
	for _, c := range corpus.CAOCases(t) {
		if filepath.Base(c.Dir) != "minimal-cluster" {
			continue
		}
		out, err := runParity(t, "--config-standalone", standaloneConfig, "--config-hosted", caoHostedConfig,
			"--from", c.ExpectedOutput, "--operator", "cluster-authentication-operator")
		// Without --output-resources neither plan writes a privileged object (the CRD): both
		// reject it, and parity says so for each.
		if err == nil || !hostedRejection.MatchString(err.Error()) {
			t.Errorf("error %v, want the hosted plan's rejection", err)
		}
		if n := strings.Count(out, "rolebindingrestrictions.authorization.openshift.io\n"); !strings.Contains(out, "REJECTED (1)") || n != 1 {
			t.Errorf("the rejected object is shown %d times, want once under REJECTED:\n%s", n, out)
		}
		return
	}
	t.Skip("no CAO case minimal-cluster")
}

// TestParityCorpus: the two CAO cases with expected outputs and declarations, every
// difference attributed.
func TestParityCorpus(t *testing.T) {
	want := map[string]bool{"oauth-server-creation-minimal": true, "minimal-cluster": true}
	for _, c := range corpus.Cases(t) {
		if c.Operator != corpus.CAO || !want[filepath.Base(c.Dir)] {
			continue
		}
		delete(want, filepath.Base(c.Dir))
		t.Run(c.Name, func(t *testing.T) {
			out, err := runParity(t, "--config-standalone", standaloneConfig, "--config-hosted", hostedConfig,
				"--from", c.ExpectedOutput, "--output-resources", c.OutputResources, "--operator", "cluster-authentication-operator")
			if errors.Is(err, parity.ErrUnexplained) {
				t.Fatalf("%v\n%s", err, out)
			}
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			t.Log(lines[len(lines)-1])
			if !strings.HasSuffix(lines[len(lines)-1], " 0 unexplained") {
				t.Errorf("last line %q: want 0 unexplained", lines[len(lines)-1])
			}
		})
	}
	if len(want) > 0 {
		t.Errorf("corpus cases not found: %v", want)
	}
}
