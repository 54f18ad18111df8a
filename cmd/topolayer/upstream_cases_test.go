package main

import (
	"encoding/xml"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// upstreamHarness returns the upstream multi-operator-manager binary and the directory of
// its sample operator (where the upstream test-data's ./sample-operator resolves), and the
// upstream case test-basic-call; it skips the test when either is absent.
func upstreamHarness(t *testing.T) (mom, ops, basic string) {
	t.Helper()
	ops = os.Getenv("TOPOLAYER_OPERATORS")
	if ops == "" {
		t.Skip("TOPOLAYER_OPERATORS is unset: no upstream multi-operator-manager binary to compare with (.ci/run sets it; ../shared/operators/unpack.sh DIR writes one)")
	}
	ops, _ = filepath.Abs(ops)
	mom = filepath.Join(ops, "multi-operator-manager")
	for _, f := range []string{mom, filepath.Join(ops, "sample-operator")} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("TOPOLAYER_OPERATORS=%s lacks %s: %v", ops, filepath.Base(f), err)
		}
	}
	basic = filepath.Join(os.Getenv("TOPOLAYER_CORPUS"), "multi-operator-manager", "test-data", "apply-configuration", "test-basic-call")
	if os.Getenv("TOPOLAYER_CORPUS") == "" || !isDirectory(basic) {
		t.Skipf("TOPOLAYER_CORPUS=%q holds no multi-operator-manager test-basic-call", os.Getenv("TOPOLAYER_CORPUS"))
	}
	return mom, ops, basic
}

// harnessOutcome is what a harness run leaves: its exit status, the files of its output
// directory (nil when there is none), and the files of the test directory afterwards.
type harnessOutcome struct {
	status   int
	output   []string
	tests    map[string]string
	junit    *junitReport
	combined string
}

type junitReport struct {
	Cases []struct {
		Name    string `xml:"name,attr"`
		Failure *struct {
			Message string `xml:"message,attr"`
		} `xml:"failure"`
		SystemOut string `xml:"system-out"`
		SystemErr string `xml:"system-err"`
	} `xml:"testcase"`
}

// TestUpstreamHarnessCases runs the upstream harness and `topolayer test
// apply-configuration` on the cases where they used to differ, each on its own copy, and
// asserts the same exit status, the same output layout and the same test directory after.
func TestUpstreamHarnessCases(t *testing.T) {
	mom, ops, basic := upstreamHarness(t)
	// changedExpected copies test-basic-call under root, its expected controller-results
	// changed, and returns root.
	changedExpected := func(t *testing.T, root string) string {
		copyTest(t, basic, root, "test-basic-call")
		editAll(t, filepath.Join(root, "test-basic-call", "expected-output"), "controller-results", func(s string) string { return s + "# changed\n" })
		return root
	}
	for _, tc := range []struct {
		name string
		// setup writes the tests under root and returns the --test-dir
		setup func(t *testing.T, root string) string
		args  []string
		check func(t *testing.T, up, tl harnessOutcome)
	}{
		{
			// Its output directory is the root, removed when the test passes, before
			// junit.xml is written there: both fail.
			name:  "test-dir is a test",
			setup: func(t *testing.T, root string) string { return copyTest(t, basic, root, ".") },
		},
		{
			name:  "test-dir is a test, KeepAlways",
			setup: func(t *testing.T, root string) string { return copyTest(t, basic, root, ".") },
			args:  []string{"--preserve-policy", "KeepAlways"},
		},
		{
			// The policy alone records the outputs, compares nothing and leaves
			// expected-output alone, even when it differs.
			name:  "preserve-policy ReplaceExpectedOutput",
			setup: changedExpected,
			args:  []string{"--preserve-policy", "ReplaceExpectedOutput"},
		},
		{
			name:  "replace-expected-output",
			setup: changedExpected,
			args:  []string{"--replace-expected-output"},
		},
		{
			// An input object named test is a file test.yaml: upstream takes its folder for
			// a test, finds it invalid, and runs nothing.
			name: "test.yaml in input-dir",
			setup: func(t *testing.T, root string) string {
				copyTest(t, basic, root, "test-basic-call")
				writeFile(t, filepath.Join(root, "test-basic-call", "input-dir", "namespaces", "x", "core", "configmaps", "test.yaml"),
					"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: test\n  namespace: x\n", 0o644)
				return root
			},
		},
		{
			name: "a failing test",
			setup: func(t *testing.T, root string) string {
				copyTest(t, basic, root, "test-basic-call")
				editAll(t, filepath.Join(root, "test-basic-call", "expected-output"), "controller-results", func(s string) string {
					return strings.Replace(s, "Succeeded", "Failed", 1)
				})
				return root
			},
			check: func(t *testing.T, up, tl harnessOutcome) {
				if tl.junit == nil || len(tl.junit.Cases) != 3 || tl.junit.Cases[2].Failure == nil {
					t.Fatalf("topolayer's junit.xml has no failing third case: %+v", tl.junit)
				}
				msg := tl.junit.Cases[2].Failure.Message
				if strings.Contains(msg, "problems") || !strings.Contains(msg, "controller-results") {
					t.Errorf("failure message does not name the first difference: %q", msg)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(harness string) harnessOutcome {
				root := filepath.Join(t.TempDir(), "tests")
				testDir := tc.setup(t, root)
				out := filepath.Join(t.TempDir(), "out")
				args := append([]string{"test", "apply-configuration", "--test-dir", testDir, "--output-dir", out}, tc.args...)
				var o harnessOutcome
				if harness == "upstream" {
					cmd := exec.Command(mom, args...)
					cmd.Dir = ops
					combined, err := cmd.CombinedOutput()
					o.combined = string(combined)
					if ee, ok := err.(*exec.ExitError); ok {
						o.status = ee.ExitCode()
					} else if err != nil {
						t.Fatal(err)
					}
				} else {
					t.Chdir(ops)
					var stdout, stderr string
					o.status, stdout, stderr = runCLI(t, args...)
					o.combined = stdout + stderr
				}
				o.output = treeFiles(t, out)
				o.tests = treeContents(t, root)
				if data, err := os.ReadFile(filepath.Join(out, "junit.xml")); err == nil {
					o.junit = &junitReport{}
					if err := xml.Unmarshal(data, o.junit); err != nil {
						t.Fatalf("%s junit.xml: %v", harness, err)
					}
				}
				return o
			}
			up, tl := run("upstream"), run("topolayer")
			if up.status != tl.status {
				t.Errorf("exit status: upstream %d, topolayer %d\nupstream:\n%s\ntopolayer:\n%s", up.status, tl.status, up.combined, tl.combined)
			}
			if !slices.Equal(up.output, tl.output) {
				t.Errorf("output directory:\nupstream  %q\ntopolayer %q", up.output, tl.output)
			}
			if len(up.tests) != len(tl.tests) {
				t.Errorf("test directory: upstream has %d files, topolayer %d", len(up.tests), len(tl.tests))
			}
			for name, content := range up.tests {
				if tl.tests[name] != content {
					t.Errorf("test directory: %s differs from upstream's", name)
				}
			}
			if (up.junit == nil) != (tl.junit == nil) || (up.junit != nil && len(up.junit.Cases) != len(tl.junit.Cases)) {
				t.Errorf("junit.xml: upstream %+v, topolayer %+v", up.junit, tl.junit)
			}
			if tc.check != nil {
				tc.check(t, up, tl)
			}
		})
	}
}

// copyTest copies the test directory from into root/name and returns root/name.
func copyTest(t *testing.T, from, root, name string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// treeFiles lists the files under dir, relative and sorted; nil when dir does not exist.
func treeFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	for name := range treeContents(t, dir) {
		files = append(files, name)
	}
	slices.Sort(files)
	return files
}

// treeContents reads the files under dir by relative path; nil when dir does not exist.
func treeContents(t *testing.T, dir string) map[string]string {
	t.Helper()
	if !isDirectory(dir) {
		return nil
	}
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
