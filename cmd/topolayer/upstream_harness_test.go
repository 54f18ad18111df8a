package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// parityCase is one test directory that both harnesses run on their own.
type parityCase struct {
	name  string
	dir   string // the test directory
	asIs  bool   // pass dir itself as --test-dir, rather than a copy in a parent directory
	cwd   string // where test.yaml's relative binaryName resolves
	path  string // prepended to PATH, where a bare binaryName resolves
	notes string
}

// TestUpstreamHarnessParity runs the multi-operator-manager's harness binary and `topolayer
// test apply-configuration` over the same cases and asserts the same verdict on each: the
// upstream test-data with upstream's sample operator, topolayer's sample tests with
// topolayer's sample operators, and variants of one upstream case that probe where the two
// readers differ. It logs a table of the verdicts.
func TestUpstreamHarnessParity(t *testing.T) {
	ops := os.Getenv("TOPOLAYER_OPERATORS")
	if ops == "" {
		t.Skip("TOPOLAYER_OPERATORS is unset: no upstream multi-operator-manager binary to compare with (.ci/run sets it)")
	}
	mom := filepath.Join(ops, "multi-operator-manager")
	upstreamSample := filepath.Join(ops, "sample-operator")
	for _, f := range []string{mom, upstreamSample} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("TOPOLAYER_OPERATORS=%s lacks %s: %v", ops, filepath.Base(f), err)
		}
	}
	corpus := os.Getenv("TOPOLAYER_CORPUS")
	testData := filepath.Join(corpus, "multi-operator-manager", "test-data", "apply-configuration")
	if corpus == "" || !isDirectory(testData) {
		t.Skipf("TOPOLAYER_CORPUS=%q holds no multi-operator-manager/test-data/apply-configuration", corpus)
	}
	ops, _ = filepath.Abs(ops)
	upstreamSample = filepath.Join(ops, "sample-operator")
	bin := buildSampleOperators(t)

	var cases []parityCase
	entries, err := os.ReadDir(testData)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		cases = append(cases, parityCase{name: "upstream/" + e.Name(), dir: filepath.Join(testData, e.Name()), cwd: ops})
	}
	for _, op := range []string{"sample-operator", "sample-audit-operator"} {
		dirs, err := os.ReadDir(filepath.Join(sampleTests, op))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dirs {
			dir, _ := filepath.Abs(filepath.Join(sampleTests, op, d.Name()))
			cases = append(cases, parityCase{name: "topolayer/" + op + "/" + d.Name(), dir: dir, cwd: t.TempDir(), path: bin})
		}
	}
	cases = append(cases, parityVariants(t, filepath.Join(testData, "test-basic-call"), upstreamSample)...)

	type verdict struct{ upstream, topolayer, warning string }
	verdicts := make([]verdict, len(cases))
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			testDir := c.dir
			if !c.asIs {
				// --test-dir is a parent of the test: upstream fails a passing test given as
				// --test-dir itself (its output directory is the root, removed before junit.xml
				// is written there), a case of its own below.
				testDir = t.TempDir()
				if err := os.CopyFS(filepath.Join(testDir, filepath.Base(c.dir)), os.DirFS(c.dir)); err != nil {
					t.Fatal(err)
				}
			}
			if c.path != "" {
				t.Setenv("PATH", c.path+string(os.PathListSeparator)+os.Getenv("PATH"))
			}
			up := exec.Command(mom, "test", "apply-configuration", "--test-dir", testDir, "--output-dir", filepath.Join(t.TempDir(), "upstream"))
			up.Dir = c.cwd
			upOut, upErr := up.CombinedOutput()
			if _, ok := upErr.(*exec.ExitError); upErr != nil && !ok {
				t.Fatalf("upstream harness: %v", upErr)
			}

			t.Chdir(c.cwd)
			var out bytes.Buffer
			cmd := NewCmdTestApplyConfiguration(IOStreams{Out: &out, ErrOut: &out})
			cmd.SetArgs([]string{"--test-dir", testDir, "--output-dir", filepath.Join(t.TempDir(), "topolayer")})
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			tlErr := cmd.ExecuteContext(context.Background())

			v := verdict{upstream: passFail(upErr), topolayer: passFail(tlErr)}
			if strings.Contains(out.String(), "warning: ") {
				v.warning = "warning"
			}
			verdicts[i] = v
			if v.upstream != v.topolayer {
				t.Errorf("upstream %s, topolayer %s (%s)\nupstream:\n%s\ntopolayer:\n%s", v.upstream, v.topolayer, c.notes, upOut, out.String())
			}
			if c.notes != "" && strings.Contains(c.notes, "warns") && v.warning == "" && v.topolayer == "PASS" {
				t.Errorf("no warning that topolayer run would refuse it:\n%s", out.String())
			}
		})
	}
	t.Run("replace-expected-output", func(t *testing.T) {
		// Expected outputs that topolayer rewrites pass the upstream harness.
		dir := filepath.Join(t.TempDir(), "tests")
		if err := os.CopyFS(dir, os.DirFS(testData)); err != nil {
			t.Fatal(err)
		}
		t.Chdir(ops)
		var out bytes.Buffer
		cmd := NewCmdTestApplyConfiguration(IOStreams{Out: &out, ErrOut: &out})
		cmd.SetArgs([]string{"--test-dir", dir, "--output-dir", filepath.Join(t.TempDir(), "o"), "--replace-expected-output"})
		if err := cmd.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if logs, _ := filepath.Glob(filepath.Join(dir, "*", "expected-output", "*.log")); len(logs) > 0 {
			t.Errorf("logs left in expected-output: %v", logs)
		}
		up := exec.Command(mom, "test", "apply-configuration", "--test-dir", dir, "--output-dir", filepath.Join(t.TempDir(), "u"))
		up.Dir = ops
		if upOut, err := up.CombinedOutput(); err != nil {
			t.Errorf("upstream fails the rewritten tests: %v\n%s", err, upOut)
		}
	})

	var table strings.Builder
	fmt.Fprintf(&table, "%-58s %-8s %-9s %s\n", "CASE", "UPSTREAM", "TOPOLAYER", "NOTES")
	for i, c := range cases {
		v := verdicts[i]
		notes := c.notes
		if v.warning != "" {
			notes = strings.TrimSpace(notes + " [warned]")
		}
		fmt.Fprintf(&table, "%-58s %-8s %-9s %s\n", c.name, v.upstream, v.topolayer, notes)
	}
	t.Logf("verdicts:\n%s", table.String())
}

func passFail(err error) string {
	if err == nil {
		return "PASS"
	}
	return "FAIL"
}

func isDirectory(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// parityVariants writes variants of the upstream case base into temporary directories,
// each probing one difference between upstream's reader and topolayer's.
func parityVariants(t *testing.T, base, upstreamSample string) []parityCase {
	t.Helper()
	root := t.TempDir()
	// Operators the variants run, in the directory their binaryName is relative to.
	cwd := filepath.Join(root, "bin")
	scripts := map[string]string{
		"needs-home": `[ -n "$HOME" ] || { echo "HOME is unset" >&2; exit 3; }` + "\nexec " + upstreamSample + ` "$@"`,
		"then-hang":  upstreamSample + ` "$@"` + "\nexec sleep 30",
	}
	for name, body := range scripts {
		writeFile(t, filepath.Join(cwd, name), "#!/bin/sh\n"+body+"\n", 0o755)
	}
	if err := os.Symlink(upstreamSample, filepath.Join(cwd, "sample-operator")); err != nil {
		t.Fatal(err)
	}

	type variant struct {
		name, notes string
		edit        func(dir string) // dir is the test directory
	}
	expected := func(dir string, rel ...string) string {
		return filepath.Join(append([]string{dir, "expected-output"}, rel...)...)
	}
	const ingressDir = "Configuration/Create/cluster-scoped-resources/config.openshift.io/ingresses"
	variants := []variant{
		{"unchanged", "the base case", func(string) {}},
		{"metadata-name-key", "name: instead of mame: in expected metadata", func(dir string) {
			editAll(t, expected(dir), "-metadata-", func(s string) string { return regexp.MustCompile(`(?m)^mame:`).ReplaceAllString(s, "name:") })
		}},
		{"errors-empty-list", "errors: [] in controller-results", func(dir string) {
			editFile(t, expected(dir, "controller-results.yaml"), func(s string) string {
				return strings.Replace(s, "  status: Succeeded\n", "  status: Succeeded\n  errors: []\n", 1)
			})
		}},
		{"test-yaml-extra-key", "warns: unknown key in test.yaml", func(dir string) {
			editFile(t, filepath.Join(dir, "test.yaml"), func(s string) string { return s + "\nowner: someone\n" })
		}},
		{"metadata-extra-key", "warns: unknown key in metadata", func(dir string) {
			editAll(t, expected(dir), "-metadata-", func(s string) string { return s + "note: hand-written\n" })
		}},
		{"controller-results-extra-key", "warns: unknown key in controller-results", func(dir string) {
			editFile(t, expected(dir, "controller-results.yaml"), func(s string) string { return s + "generatedBy: hand\n" })
		}},
		{"gitkeep-in-class-and-action", "warns: .gitkeep files", func(dir string) {
			writeFile(t, expected(dir, "Configuration", ".gitkeep"), "", 0o644)
			writeFile(t, expected(dir, ingressDir, ".gitkeep"), "", 0o644)
		}},
		{"gitkeep-top-level", ".gitkeep beside the class folders", func(dir string) {
			writeFile(t, expected(dir, ".gitkeep"), "", 0o644)
		}},
		{"orphan-metadata", "warns: metadata without a body", func(dir string) {
			copyFile(t, expected(dir, ingressDir, "d5f3-metadata-cluster.yaml"), expected(dir, ingressDir, "ffff-metadata-ghost.yaml"))
		}},
		{"json-body-extra", "warns: an extra .json body", func(dir string) {
			writeFile(t, expected(dir, ingressDir, "eeee-body-other.json"), `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"other"}}`, 0o644)
			copyFile(t, expected(dir, ingressDir, "d5f3-metadata-cluster.yaml"), expected(dir, ingressDir, "eeee-metadata-other.json"))
		}},
		{"json-body-renamed", "the ingress body renamed .json", func(dir string) {
			if err := os.Rename(expected(dir, ingressDir, "d5f3-body-cluster.yaml"), expected(dir, ingressDir, "d5f3-body-cluster.json")); err != nil {
				t.Fatal(err)
			}
		}},
		{"empty-options-file", "empty options file == absent", func(dir string) {
			writeFile(t, expected(dir, ingressDir, "d5f3-options-cluster.yaml"), "", 0o644)
		}},
		{"empty-controller-results", "empty controller-results.yaml", func(dir string) {
			writeFile(t, expected(dir, "controller-results.yaml"), "", 0o644)
		}},
		{"controller-results-reordered", "controller results out of order", func(dir string) {
			editFile(t, expected(dir, "controller-results.yaml"), func(s string) string {
				return strings.Replace(s, "- controllerName: sample-operator-Demo\n  status: Succeeded\n", "", 1) + "- controllerName: sample-operator-Demo\n  status: Succeeded\n"
			})
		}},
		{"duplicate-record", "a request recorded twice", func(dir string) {
			for _, k := range []string{"body", "metadata"} {
				copyFile(t, expected(dir, ingressDir, "d5f3-"+k+"-cluster.yaml"), expected(dir, ingressDir, "0000-"+k+"-cluster.yaml"))
			}
		}},
		{"body-requoted", "the same YAML, quoted differently", func(dir string) {
			editFile(t, expected(dir, ingressDir, "d5f3-body-cluster.yaml"), func(s string) string {
				return regexp.MustCompile(`(?m)^(\s*name: )(\S+)$`).ReplaceAllString(s, `$1'$2'`)
			})
		}},
		{"unspecified-class", "an Unspecified folder", func(dir string) {
			if err := os.CopyFS(expected(dir, "Unspecified"), os.DirFS(expected(dir, "Configuration"))); err != nil {
				t.Fatal(err)
			}
		}},
		{"event-differs", "events are ignored", func(dir string) {
			editAll(t, expected(dir, "Management", "Create"), "-body-", func(s string) string { return strings.Replace(s, "message: ", "message: changed ", 1) })
		}},
		{"needs-home", "an operator that needs $HOME", func(dir string) {
			editFile(t, filepath.Join(dir, "test.yaml"), func(s string) string { return strings.Replace(s, "./sample-operator", "./needs-home", 1) })
		}},
		{"timeout-nonzero-desired", "killed at 5 s, NonZeroReturn wanted", func(dir string) {
			editFile(t, filepath.Join(dir, "test.yaml"), func(s string) string {
				return strings.Replace(s, "./sample-operator", "./then-hang", 1) + "\ndesiredError: NonZeroReturn\n"
			})
		}},
		{"timeout-zero-desired", "killed at 5 s, exit 0 wanted", func(dir string) {
			editFile(t, filepath.Join(dir, "test.yaml"), func(s string) string { return strings.Replace(s, "./sample-operator", "./then-hang", 1) })
		}},
		{"nonzero-desired-exit-zero", "NonZeroReturn wanted, exit 0", func(dir string) {
			editFile(t, filepath.Join(dir, "test.yaml"), func(s string) string { return s + "\ndesiredError: NonZeroReturn\n" })
		}},
	}
	var cases []parityCase
	for _, v := range variants {
		dir := filepath.Join(root, "variants", v.name)
		if err := os.CopyFS(dir, os.DirFS(base)); err != nil {
			t.Fatal(err)
		}
		if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil {
				err = os.Chmod(p, map[bool]fs.FileMode{true: 0o755, false: 0o644}[d.IsDir()])
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		v.edit(dir)
		cases = append(cases, parityCase{name: "variant/" + v.name, dir: dir, cwd: cwd, notes: v.notes})
	}
	cases = append(cases, parityCase{name: "variant/test-dir-is-the-test", dir: filepath.Join(root, "variants", "unchanged"), asIs: true, cwd: cwd,
		notes: "--test-dir names the test itself"})
	cases = append(cases, parityCase{name: "variant/no-tests", dir: t.TempDir(), asIs: true, cwd: cwd, notes: "a --test-dir without tests"})
	return cases
}

func writeFile(t *testing.T, path, data string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, string(data), 0o644)
}

func editFile(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, edit(string(data)), 0o644)
}

// editAll edits every file under dir whose name holds part.
func editAll(t *testing.T, dir, part string, edit func(string) string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(d.Name(), part) {
			editFile(t, p, edit)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
