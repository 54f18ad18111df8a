package harness_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/mom/harness"
	"github.com/topolayer/topolayer/internal/samples/sample"
	"github.com/topolayer/topolayer/internal/samples/sampleaudit"
)

// examples holds the sample operators' tests.
const examples = "../../../examples/sample-operators/tests"

// inProcess returns a runner of a sample operator's command line.
func inProcess(t *testing.T, name string) harness.Runner {
	t.Helper()
	return harness.CommandRunner(func() *cobra.Command {
		var cmd *cobra.Command
		switch name {
		case sample.Name:
			op, err := sample.New("")
			if err != nil {
				t.Fatal(err)
			}
			cmd = op.Command()
		case sampleaudit.Name:
			op, err := sampleaudit.New()
			if err != nil {
				t.Fatal(err)
			}
			cmd = op.Command()
		}
		return cmd
	})
}

func TestSampleOperatorsPassTheirTests(t *testing.T) {
	for _, name := range []string{sample.Name, sampleaudit.Name} {
		t.Run(name, func(t *testing.T) {
			report, err := harness.Run(context.Background(), harness.Options{
				TestDir: filepath.Join(examples, name),
				Runner:  inProcess(t, name),
			})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			report.Print(&out)
			if report.Err() != nil || report.OutputDir != "" {
				t.Fatalf("%v\n%s", report.Err(), out.String())
			}
			if len(report.Results) < 2 {
				t.Errorf("only %d tests ran", len(report.Results))
			}
		})
	}
}

// copyTest copies one example test into a fresh directory and returns it.
func copyTest(t *testing.T, op, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(examples, op, name))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// editExpected rewrites the one expected file whose path contains part.
func editExpected(t *testing.T, testDir, part string, edit func(string) string) {
	t.Helper()
	var found []string
	_ = filepath.WalkDir(filepath.Join(testDir, harness.ExpectedOutputDir), func(p string, d os.DirEntry, _ error) error {
		if !d.IsDir() && strings.Contains(p, part) {
			found = append(found, p)
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("%d expected files match %q", len(found), part)
	}
	data, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(found[0], []byte(edit(string(data))), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestADifferentExpectedFileFails(t *testing.T) {
	dir := copyTest(t, sample.Name, "defaults")
	editExpected(t, dir, "deployments/ad9e-body-sample.yaml", func(s string) string {
		return strings.Replace(s, "replicas: 1\n", "replicas: 2\n", 1)
	})
	report, err := harness.Run(context.Background(), harness.Options{TestDir: dir, Runner: inProcess(t, sample.Name)})
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(report.OutputDir)
	var out bytes.Buffer
	report.Print(&out)
	for _, want := range []string{
		"FAIL    . (defaults)",
		"Management: differs: Apply deployments.apps openshift-sample/sample by \"sample-operator-Workload\" (expected Management/Apply/namespaces/openshift-sample/apps/deployments/ad9e-body-sample.yaml, actual Management/Apply/namespaces/openshift-sample/apps/deployments/ad9e-body-sample.yaml):",
		"        body:\n        --- expected\n        +++ actual\n",
		"        -  replicas: 2\n        +  replicas: 1\n",
		"    actual output kept in " + report.OutputDir,
		"1 tests, 0 passed, 1 failed\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, out.String())
		}
	}
	if err := report.Err(); err == nil || err.Error() != "1 of 1 tests failed: ." {
		t.Errorf("error %v", err)
	}
}

func TestUpdateRewritesExpectedOutput(t *testing.T) {
	dir := copyTest(t, sample.Name, "replicas-and-message")
	want, err := contract.ReadOutputDir(filepath.Join(dir, harness.ExpectedOutputDir), contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, harness.ExpectedOutputDir)); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := harness.Run(ctx, harness.Options{TestDir: dir, Runner: inProcess(t, sample.Name)}); err == nil {
		t.Fatal("a test without expected-output ran")
	}
	report, err := harness.Run(ctx, harness.Options{TestDir: dir, Runner: inProcess(t, sample.Name), Update: true})
	if err != nil || report.Err() != nil || !report.Results[0].Updated {
		t.Fatalf("update: %v, %v, %+v", err, report.Err(), report.Results)
	}
	got, err := contract.ReadOutputDir(filepath.Join(dir, harness.ExpectedOutputDir), contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := harness.CompareOutputs(want, got); len(d) > 0 {
		t.Errorf("the rewritten expected output differs from the committed one:\n%s", strings.Join(d, "\n"))
	}
	for _, log := range []string{harness.StdoutLog, harness.StderrLog} {
		if _, err := os.Stat(filepath.Join(dir, harness.ExpectedOutputDir, log)); err == nil {
			t.Errorf("%s was kept in expected-output", log)
		}
	}
}

// fakeTest writes a test whose expected output holds controller results only.
func fakeTest(t *testing.T, desiredError string) string {
	t.Helper()
	dir := t.TempDir()
	testYAML := "binaryName: ./op\ntestName: fake\ndescription: d\ntestType: ApplyConfiguration\n"
	if desiredError != "" {
		testYAML += "desiredError: " + desiredError + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, contract.TestFile), []byte(testYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, harness.InputDirName), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := contract.WriteOutputDir(filepath.Join(dir, harness.ExpectedOutputDir), fakeOutput(), contract.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func fakeOutput() *contract.OutputDir {
	return &contract.OutputDir{HasControllerResults: true, ControllerResults: &contract.ControllerResults{
		ControllerResults: []contract.ControllerResult{{ControllerName: "fake", Status: contract.ControllerSucceeded}},
	}}
}

// fakeRunner writes the fake output into --output-dir, prints on stderr, and returns err.
func fakeRunner(err error) harness.Runner {
	return func(_ context.Context, argv []string, _, stderr io.Writer) error {
		i := slices.Index(argv, "--output-dir")
		tmp := argv[i+1] + ".tmp" // the harness pre-creates the output directory with its logs
		if werr := contract.WriteOutputDir(tmp, fakeOutput(), contract.WriteOptions{}); werr != nil {
			return werr
		}
		if werr := os.CopyFS(argv[i+1], os.DirFS(tmp)); werr != nil {
			return werr
		}
		io.WriteString(stderr, "some log line\n")
		return err
	}
}

func TestRunTestOutcomes(t *testing.T) {
	blocked := func(ctx context.Context, _ []string, _, _ io.Writer) error {
		<-ctx.Done()
		return &harness.ExitError{Code: -1, Err: ctx.Err()}
	}
	notStarted := func(context.Context, []string, io.Writer, io.Writer) error {
		return errors.New("exec: \"./op\": no such file")
	}
	tests := map[string]struct {
		desiredError string
		runner       harness.Runner
		want         []string // one substring per problem
	}{
		"exit zero":                       {runner: fakeRunner(nil)},
		"exit non-zero":                   {runner: fakeRunner(&harness.ExitError{Code: 2}), want: []string{"the operator exited with status 2; its stderr ends with:\n    some log line"}},
		"exit non-zero when expected":     {desiredError: "NonZeroReturn", runner: fakeRunner(&harness.ExitError{Code: 1})},
		"exit zero when non-zero desired": {desiredError: "NonZeroReturn", runner: fakeRunner(nil), want: []string{"the operator exited 0, but test.yaml says desiredError: NonZeroReturn"}},
		"could not run":                   {runner: notStarted, want: []string{`./op apply-configuration --input-dir`, `could not run: exec: "./op": no such file`}},
		"timeout":                         {runner: blocked, want: []string{"exited with status -1 (killed: it did not finish within 50ms)", "controller-results.yaml is absent or empty in the actual output"}},
		"timeout when non-zero desired":   {desiredError: "NonZeroReturn", runner: blocked, want: []string{"controller-results.yaml is absent or empty in the actual output"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tests, err := harness.Discover(fakeTest(t, tc.desiredError), true)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out")
			// Only the timeout cases may time out: the others finish whatever the machine's
			// load (a fake runner writing its files took longer than 50ms on a busy machine).
			timeout := time.Minute
			if strings.HasPrefix(name, "timeout") {
				timeout = 50 * time.Millisecond
			}
			res := harness.RunTest(context.Background(), tests[0], out, harness.Options{Runner: tc.runner, Timeout: timeout})
			if len(res.Problems) != len(tc.want) && !(name == "could not run" && len(res.Problems) == 1) {
				t.Fatalf("problems %q, want %d", res.Problems, len(tc.want))
			}
			joined := strings.Join(res.Problems, "\n")
			for _, w := range tc.want {
				if !strings.Contains(joined, w) {
					t.Errorf("problems lack %q:\n%s", w, joined)
				}
			}
			if log, _ := os.ReadFile(filepath.Join(out, harness.StderrLog)); tc.runner != nil && name != "could not run" && !strings.HasPrefix(name, "timeout") && string(log) != "some log line\n" {
				t.Errorf("stderr.log = %q", log)
			}
		})
	}
}

func TestDiscover(t *testing.T) {
	valid := "binaryName: op\ntestName: t\ndescription: d\ntestType: ApplyConfiguration\n"
	tests := map[string]struct {
		files           map[string]string
		requireExpected bool
		want            []string
		wantErr         string
	}{
		"nested tests": {
			files: map[string]string{
				"a/test.yaml": valid, "a/input-dir/x": "", "a/expected-output/controller-results.yaml": "null\n",
				"b/c/test.yaml": valid, "b/c/input-dir/x": "", "b/c/expected-output/x": "",
				"d/readme": "",
			},
			requireExpected: true,
			want:            []string{"a", "b/c"},
		},
		"missing input-dir": {
			files:   map[string]string{"a/test.yaml": valid, "a/expected-output/x": ""},
			wantErr: "a/test.yaml: input-dir: missing directory",
		},
		"expected-output not needed to update": {
			files: map[string]string{"a/test.yaml": valid, "a/input-dir/x": ""},
			want:  []string{"a"},
		},
		"expected-output needed to compare": {
			files:           map[string]string{"a/test.yaml": valid, "a/input-dir/x": ""},
			requireExpected: true,
			wantErr:         "expected-output: missing directory (run with --update to create it)",
		},
		"invalid test.yaml": {
			files:   map[string]string{"a/test.yaml": "binaryName: op\ntestType: Other\n", "a/input-dir/x": ""},
			wantErr: `testType: "Other", want ApplyConfiguration`,
		},
		"no test": {
			files:   map[string]string{"x": ""},
			wantErr: "no test found",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			contracttest.WriteFiles(t, root, tc.files)
			got, err := harness.Discover(root, tc.requireExpected)
			if contracttest.CheckErr(t, err, tc.wantErr) {
				return
			}
			var names []string
			for _, g := range got {
				names = append(names, g.Name)
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("tests %v, want %v", names, tc.want)
			}
		})
	}
}

func TestCompare(t *testing.T) {
	base := contracttest.ValidMutations()
	results := &contract.ControllerResults{ControllerResults: []contract.ControllerResult{{ControllerName: "sample-Controller", Status: contract.ControllerSucceeded}}}
	edit := func(i int, f func(m *contract.Mutation)) []contract.Mutation {
		ms := slices.Clone(base)
		f(&ms[i])
		return ms
	}
	tests := map[string]struct {
		actual  []contract.Mutation
		results *contract.ControllerResults
		stray   bool
		want    []string // substrings, one per difference
	}{
		"identical": {actual: base},
		"events are ignored": {actual: edit(3, func(m *contract.Mutation) {
			m.Body = []byte(strings.Replace(string(m.Body), "reason: Created", "reason: Other", 1))
		})},
		"prefixes are ignored": {actual: edit(1, func(m *contract.Mutation) { m.Prefix = "001" })},
		"duplicates are ignored": {actual: append(slices.Clone(base), func() contract.Mutation {
			m := base[1]
			m.Prefix = "002"
			return m
		}())},
		"body": {
			actual: edit(1, func(m *contract.Mutation) { m.Body = []byte(strings.Replace(string(m.Body), `"2"`, `"3"`, 1)) }),
			want:   []string{"Management: differs: Create configmaps openshift-sample/settings by \"sample-Controller\" (expected Management/Create/namespaces/openshift-sample/core/configmaps/"},
		},
		"options": {
			actual: edit(4, func(m *contract.Mutation) { m.Options = []byte("fieldManager: sample-status\n") }),
			want:   []string{"options:\n    --- expected\n    +++ actual\n    @@ -1,2 +1 @@\n     fieldManager: sample-status\n    -force: true"},
		},
		"controller instance": {
			actual: edit(0, func(m *contract.Mutation) { m.Metadata.ControllerInstanceName = "other" }),
			want:   []string{`Management: missing: Create namespaces openshift-sample by "sample-Controller"`, `Management: unexpected: Create namespaces openshift-sample by "other"`},
		},
		"missing": {
			actual: slices.Delete(slices.Clone(base), 7, 8),
			want:   []string{"UserWorkload: missing: Create certificatesigningrequests.certificates.k8s.io system:sample:client- by \"sample-Controller\" (expected UserWorkload/Create/cluster-scoped-resources/certificates.k8s.io/certificatesigningrequests/"},
		},
		"unexpected": {
			actual: append(slices.Clone(base), func() contract.Mutation {
				m := base[1]
				m.Metadata.Name, m.Body = "extra", []byte(strings.Replace(string(m.Body), "name: settings", "name: extra", 1))
				return m
			}()),
			want: []string{"Management: unexpected: Create configmaps openshift-sample/extra by \"sample-Controller\" (actual "},
		},
		"undeclared": {
			actual: append(slices.Clone(base), func() contract.Mutation { m := base[1]; m.Class = contract.ClassUnspecified; return m }()),
			want:   []string{"cannot read the actual output:\n    unexpected entry \"Unspecified\""},
		},
		"controller results": {
			actual:  base,
			results: &contract.ControllerResults{ControllerResults: []contract.ControllerResult{{ControllerName: "sample-Controller", Status: contract.ControllerFailed}}},
			want:    []string{"controller-results.yaml differs (parsed):\n    --- expected\n    +++ actual\n"},
		},
		"unreadable": {actual: base, stray: true, want: []string{"cannot read the actual output:\n    "}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			exp, act := filepath.Join(dir, "expected"), filepath.Join(dir, "actual")
			write := func(path string, ms []contract.Mutation, r *contract.ControllerResults) {
				if err := contract.WriteOutputDir(path, &contract.OutputDir{Mutations: ms, ControllerResults: r, HasControllerResults: true}, contract.WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			write(exp, base, results)
			write(act, tc.actual, cmpOr(tc.results, results))
			if tc.stray {
				_ = os.WriteFile(filepath.Join(act, "notes.txt"), nil, 0o644)
			}
			got := harness.Compare(exp, act)
			if len(got) != len(tc.want) {
				t.Fatalf("%d differences, want %d:\n%s", len(got), len(tc.want), strings.Join(got, "\n"))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("difference %d lacks %q:\n%s", i, w, got[i])
				}
			}
		})
	}
}

func cmpOr[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

func TestExec(t *testing.T) {
	t.Setenv("TOPOLAYER_HARNESS_SECRET", "x")
	tests := map[string]struct {
		argv     []string
		wantCode int
		wantExit bool
		wantOut  string
	}{
		"zero":            {argv: []string{"sh", "-c", "echo hi"}, wantOut: "hi\n"},
		"non-zero":        {argv: []string{"sh", "-c", "exit 3"}, wantCode: 3, wantExit: true},
		"inherited env":   {argv: []string{"sh", "-c", `test "$TOPOLAYER_HARNESS_SECRET" = x && test -n "$PATH"`}},
		"missing program": {argv: []string{"./does-not-exist"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			err := harness.Exec(context.Background(), tc.argv, &out, io.Discard)
			var exit interface{ ExitCode() int }
			isExit := errors.As(err, &exit)
			switch {
			case name == "missing program":
				if err == nil || isExit {
					t.Fatalf("error %v", err)
				}
			case tc.wantExit:
				if !isExit || exit.ExitCode() != tc.wantCode {
					t.Fatalf("error %v, want exit %d", err, tc.wantCode)
				}
			case err != nil:
				t.Fatal(err)
			}
			if out.String() != tc.wantOut {
				t.Errorf("stdout %q, want %q", out.String(), tc.wantOut)
			}
		})
	}
}

// TestCompareReadsAsUpstream checks the verdicts of the upstream reader on hand-written
// output directories: what it ignores, and what it tells apart that topolayer's reader
// would not.
func TestCompareReadsAsUpstream(t *testing.T) {
	const cmDir = "Management/Create/namespaces/demo/core/configmaps/"
	base := map[string]string{
		"controller-results.yaml":              "controllerResults:\n- controllerName: demo-A\n  status: Succeeded\n",
		cmDir + "1234-body-cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: demo\n",
		cmDir + "1234-metadata-cm.yaml":        "action: Create\ncontrollerInstanceName: demo-A\ngenerateName: \"\"\nmame: cm\nnamespace: demo\nresourceType:\n  Group: \"\"\n  Resource: configmaps\n  Version: v1\n",
		"Management/Create/namespaces/demo/.x": "",
	}
	tests := map[string]struct {
		edit func(files map[string]string)
		pass bool
	}{
		"identical": {edit: func(map[string]string) {}, pass: true},
		"name: instead of mame": {edit: func(f map[string]string) {
			f[cmDir+"1234-metadata-cm.yaml"] = strings.Replace(f[cmDir+"1234-metadata-cm.yaml"], "mame:", "name:", 1)
		}},
		"errors: []": {edit: func(f map[string]string) { f["controller-results.yaml"] += "  errors: []\n" }},
		"unknown keys": {edit: func(f map[string]string) {
			f["controller-results.yaml"] += "extra: 1\n"
			f[cmDir+"1234-metadata-cm.yaml"] += "extra: 1\n"
		}, pass: true},
		"empty options file": {edit: func(f map[string]string) { f[cmDir+"1234-options-cm.yaml"] = "" }, pass: true},
		"orphan metadata and stray files": {edit: func(f map[string]string) {
			f[cmDir+"9999-metadata-ghost.yaml"] = "nonsense: [\n"
			f["Management/.gitkeep"] = ""
			f[cmDir+"8888-body-x.json"] = "{}"
		}, pass: true},
		"empty controller-results": {edit: func(f map[string]string) { f["controller-results.yaml"] = "" }},
		"null controller-results":  {edit: func(f map[string]string) { f["controller-results.yaml"] = "null\n" }},
		"a stray top-level file":   {edit: func(f map[string]string) { f[".gitkeep"] = "" }},
		"JSON body": {edit: func(f map[string]string) {
			f[cmDir+"1234-body-cm.yaml"] = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"demo"}}`
		}},
		"body without metadata": {edit: func(f map[string]string) { f[cmDir+"5555-body-other.yaml"] = f[cmDir+"1234-body-cm.yaml"] }},
		"duplicate": {edit: func(f map[string]string) {
			f[cmDir+"0000-body-cm.yaml"], f[cmDir+"0000-metadata-cm.yaml"] = f[cmDir+"1234-body-cm.yaml"], f[cmDir+"1234-metadata-cm.yaml"]
		}, pass: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			contracttest.WriteFiles(t, filepath.Join(dir, "expected"), base)
			files := map[string]string{}
			for k, v := range base {
				files[k] = v
			}
			tc.edit(files)
			contracttest.WriteFiles(t, filepath.Join(dir, "actual"), files)
			got := harness.Compare(filepath.Join(dir, "expected"), filepath.Join(dir, "actual"))
			if (len(got) == 0) != tc.pass {
				t.Errorf("differences %q, want pass %v", got, tc.pass)
			}
		})
	}
}
