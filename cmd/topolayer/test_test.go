package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/topolayer/topolayer/internal/golden"
)

const sampleTests = "../../examples/sample-operators/tests"

// buildSampleOperators builds the two sample operator binaries into a temporary directory.
func buildSampleOperators(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the sample operators")
	}
	bin := t.TempDir()
	cmd := exec.Command("go", "build", "-o", bin+string(filepath.Separator),
		"github.com/topolayer/topolayer/cmd/sample-operator",
		"github.com/topolayer/topolayer/cmd/sample-audit-operator")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func runTestCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := NewCmdTest(IOStreams{Out: &out, ErrOut: &errOut})
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	err := cmd.ExecuteContext(context.Background())
	return out.String() + errOut.String(), err
}

// TestSampleOperatorTests builds the sample operators and runs their tests through
// `topolayer test`, as a user would. With -update, it rewrites their expected outputs.
func TestSampleOperatorTests(t *testing.T) {
	bin := buildSampleOperators(t)
	for _, op := range []string{"sample-operator", "sample-audit-operator"} {
		t.Run(op, func(t *testing.T) {
			args := []string{"--test-dir", filepath.Join(sampleTests, op), "--operator-command", filepath.Join(bin, op), "--timeout", "30s"}
			if golden.Updating() {
				args = append(args, "--update")
			}
			out, err := runTestCmd(t, args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if strings.Contains(out, "FAIL") || !strings.Contains(out, " 0 failed\n") {
				t.Errorf("report:\n%s", out)
			}
		})
	}

	t.Run("a changed expected file fails", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "defaults")
		if err := os.CopyFS(dir, os.DirFS(filepath.Join(sampleTests, "sample-operator", "defaults"))); err != nil {
			t.Fatal(err)
		}
		cm := filepath.Join(dir, "expected-output/Management/Apply/namespaces/openshift-sample/core/configmaps/ee86-body-sample-config.yaml")
		data, err := os.ReadFile(cm)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cm, bytes.Replace(data, []byte("hello from the sample operator"), []byte("hello from an old fixture"), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		outDir := filepath.Join(t.TempDir(), "actual")
		out, err := runTestCmd(t, "--test-dir", dir, "--operator-command", filepath.Join(bin, "sample-operator"), "--output-dir", outDir, "--timeout", "30s")
		if err == nil || err.Error() != "1 of 1 tests failed: ." {
			t.Fatalf("error %v\n%s", err, out)
		}
		for _, want := range []string{
			"FAIL    . (defaults)",
			"    Management: differs: Apply configmaps openshift-sample/sample-config by ",
			" (expected Management/Apply/namespaces/openshift-sample/core/configmaps/ee86-body-sample-config.yaml, actual Management/Apply/namespaces/openshift-sample/core/configmaps/ee86-body-sample-config.yaml):\n",
			"        -  message: hello from an old fixture\n        +  message: hello from the sample operator\n",
			"    actual output kept in " + outDir + "\n",
			"1 tests, 0 passed, 1 failed\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("the report lacks %q:\n%s", want, out)
			}
		}
	})
}

func TestTestCmdValidate(t *testing.T) {
	tests := map[string]struct {
		o    TestCmdOptions
		want string
	}{
		"valid":        {o: TestCmdOptions{TestDir: "x", Timeout: time.Second}},
		"no test dir":  {o: TestCmdOptions{Timeout: time.Second}, want: "--test-dir is required"},
		"zero timeout": {o: TestCmdOptions{TestDir: "x"}, want: "--timeout 0s: must be positive"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.o.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestTestCmdMissingTests(t *testing.T) {
	out, err := runTestCmd(t, "--test-dir", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "no test found") {
		t.Errorf("error %v\n%s", err, out)
	}
}

// TestTestApplyConfiguration runs the sample operators' tests with the upstream harness's
// command line, as `topolayer test apply-configuration`, keeping every output.
func TestTestApplyConfiguration(t *testing.T) {
	bin := buildSampleOperators(t)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	outDir := filepath.Join(t.TempDir(), "out")
	out, err := runTestCmd(t, "apply-configuration", "--test-dir", sampleTests, "--output-dir", outDir, "--preserve-policy", "KeepAlways")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	junit, err := os.ReadFile(filepath.Join(outDir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<testcase name="remove output directory"`, `[Binary:&#34;sample-operator&#34;] [Controllers:[]] [Directory:&#34;` + filepath.Join(sampleTests, "sample-operator", "defaults") + `&#34;]`} {
		if !strings.Contains(string(junit), want) {
			t.Errorf("junit.xml lacks %q:\n%s", want, junit)
		}
	}
	if _, err := os.Stat(filepath.Join(outDir, "sample-operator", "defaults", "stdout.log")); err != nil {
		t.Errorf("KeepAlways did not keep a passing test's output: %v", err)
	}

	// Upstream passes a directory without tests, writing junit.xml all the same.
	empty := filepath.Join(t.TempDir(), "out")
	if out, err := runTestCmd(t, "apply-configuration", "--test-dir", t.TempDir(), "--output-dir", empty); err != nil || !strings.Contains(out, "0 tests, 0 passed, 0 failed") {
		t.Errorf("no tests: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(empty, "junit.xml")); err != nil {
		t.Error(err)
	}

	o := TestApplyConfigurationOptions{}
	if err := o.Validate(); err == nil || err.Error() != "--test-dir is required\n--output-dir is required" {
		t.Errorf("validate: %v", err)
	}
}
