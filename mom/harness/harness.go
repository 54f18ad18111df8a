package harness

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/topolayer/topolayer/contract"
)

// DefaultTimeout bounds one operator run, as in the upstream harness.
const DefaultTimeout = 5 * time.Second

// Log files the harness writes next to an actual output; output directory readers accept them.
const (
	StdoutLog = "stdout.log"
	StderrLog = "stderr.log"
)

// Options configure a run of tests. The zero value of every optional field means its default.
type Options struct {
	// TestDir is searched, at any depth, for test directories.
	TestDir string
	// OutputDir receives each test's actual output at OutputDir/<test name>. Empty means a
	// temporary directory, removed at the end unless an output is kept.
	OutputDir string
	// Command replaces every test's binaryName: the program and leading arguments. Empty
	// means each test.yaml's binaryName.
	Command []string
	// Runner runs the operator; nil means Exec.
	Runner Runner
	// Timeout bounds each operator run; 0 means DefaultTimeout.
	Timeout time.Duration
	// Update rewrites each test's expected-output with what the operator writes, instead of
	// comparing.
	Update bool
	// KeepOutputs keeps the actual outputs of passing tests too; failing ones are always kept.
	KeepOutputs bool
}

// Result is the outcome of one test.
type Result struct {
	// Test is the test that ran.
	Test Test
	// Problems say why the test failed, each a readable message; none means it passed.
	Problems []string
	// Updated is true when the test's expected-output was rewritten.
	Updated bool
	// OutputDir is the actual output; it is removed after a passing test unless kept.
	OutputDir string
	// Duration is how long the operator ran.
	Duration time.Duration
}

// Passed reports whether the test passed.
func (r Result) Passed() bool { return len(r.Problems) == 0 }

// Report is the outcome of a run: one result per test, in discovery order.
type Report struct {
	// Results has one entry per test that ran.
	Results []Result
	// OutputDir holds the outputs that were kept; "" when none was.
	OutputDir string
}

// Failed returns the number of failed tests.
func (r *Report) Failed() int {
	n := 0
	for _, res := range r.Results {
		if !res.Passed() {
			n++
		}
	}
	return n
}

// Print writes one line per test, PASS, FAIL or UPDATED, each failure's problems indented
// below it, where failing outputs were kept, and a summary line.
func (r *Report) Print(w io.Writer) {
	for _, res := range r.Results {
		verdict := "PASS"
		switch {
		case !res.Passed():
			verdict = "FAIL"
		case res.Updated:
			verdict = "UPDATED"
		}
		name := ""
		if res.Test.Description != nil {
			name = res.Test.Description.TestName
		}
		fmt.Fprintf(w, "%-7s %s (%s) %s\n", verdict, res.Test.Name, name, res.Duration.Round(time.Millisecond))
		for _, p := range res.Problems {
			fmt.Fprintln(w, indent(p))
		}
		if !res.Passed() && res.OutputDir != "" && isDir(res.OutputDir) {
			fmt.Fprintf(w, "    actual output kept in %s\n", res.OutputDir)
		}
	}
	fmt.Fprintf(w, "%d tests, %d passed, %d failed\n", len(r.Results), len(r.Results)-r.Failed(), r.Failed())
}

// Err returns an error naming the failed tests, or nil when all passed.
func (r *Report) Err() error {
	var names []string
	for _, res := range r.Results {
		if !res.Passed() {
			names = append(names, res.Test.Name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d tests failed: %s", len(names), len(r.Results), strings.Join(names, ", "))
}

// Run discovers the tests under opts.TestDir and runs each: the operator's
// apply-configuration over the test's input-dir into a fresh actual output directory, then,
// unless updating, a comparison with its expected-output. It returns an error only when
// the tests cannot run at all (discovery, the output directory); failures are in the report.
func Run(ctx context.Context, opts Options) (*Report, error) {
	tests, err := Discover(opts.TestDir, !opts.Update)
	if err != nil {
		return nil, err
	}
	root, temp := opts.OutputDir, false
	if root == "" {
		if root, err = os.MkdirTemp("", "topolayer-test-"); err != nil {
			return nil, err
		}
		temp = true
	}
	report := &Report{}
	kept := false
	for _, t := range tests {
		if ctx.Err() != nil {
			break
		}
		res := RunTest(ctx, t, filepath.Join(root, filepath.FromSlash(t.Name)), opts)
		if res.Passed() && !opts.KeepOutputs {
			_ = os.RemoveAll(res.OutputDir)
		} else {
			kept = true
		}
		report.Results = append(report.Results, res)
	}
	if kept {
		report.OutputDir = root
	} else if temp {
		_ = os.RemoveAll(root)
	}
	return report, ctx.Err()
}

// RunTest runs one test with its actual output in outDir, which is replaced.
//
// The outcome follows the upstream harness: exit zero when test.yaml wants a non-zero exit
// (desiredError: NonZeroReturn), or non-zero when it does not, fails the test, and the
// outputs are still compared; an operator that could not run fails the test without a
// comparison. With opts.Update, expected-output is replaced by the actual output (without
// the logs) instead of compared, unless the operator could not run.
func RunTest(ctx context.Context, t Test, outDir string, opts Options) Result {
	res := Result{Test: t, OutputDir: outDir}
	fail := func(format string, args ...any) { res.Problems = append(res.Problems, fmt.Sprintf(format, args...)) }
	if err := os.RemoveAll(outDir); err != nil {
		fail("prepare the actual output directory: %v", err)
		return res
	}
	if err := os.MkdirAll(filepath.Dir(outDir), 0o755); err != nil {
		fail("prepare the actual output directory: %v", err)
		return res
	}

	argv := append([]string(nil), opts.Command...)
	if len(argv) == 0 {
		argv = []string{t.Description.BinaryName}
	}
	argv = append(argv, t.Description.Args(t.InputDir(), outDir)...)
	runner := opts.Runner
	if runner == nil {
		runner = Exec
	}
	timeout := cmp.Or(opts.Timeout, DefaultTimeout)
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	var stdout, stderr bytes.Buffer
	start := time.Now()
	runErr := runner(runCtx, argv, &stdout, &stderr)
	res.Duration = time.Since(start)
	timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded)
	cancel()

	if err := writeLogs(outDir, stdout.Bytes(), stderr.Bytes()); err != nil {
		fail("write the operator's logs: %v", err)
	}
	code, exited := exitCode(runErr)
	wantNonZero := t.Description.DesiredError == contract.DesiredErrorNonZeroReturn
	switch {
	case timedOut:
		fail("%s did not finish within %s%s", strings.Join(argv, " "), timeout, tail(stderr.Bytes()))
	case runErr != nil && !exited:
		fail("%s could not run: %v%s", strings.Join(argv, " "), runErr, tail(stderr.Bytes()))
		return res
	case runErr == nil && wantNonZero:
		fail("the operator exited 0, but test.yaml says desiredError: %s", contract.DesiredErrorNonZeroReturn)
	case runErr != nil && !wantNonZero:
		fail("the operator exited with status %d%s", code, tail(stderr.Bytes()))
	}

	if opts.Update {
		if err := replaceExpected(t, outDir); err != nil {
			fail("update %s: %v", t.ExpectedDir(), err)
			return res
		}
		res.Updated = true
		return res
	}
	res.Problems = append(res.Problems, Compare(t.ExpectedDir(), outDir)...)
	return res
}

// writeLogs writes the operator's stdout and stderr next to its output, as the upstream
// harness does.
func writeLogs(dir string, stdout, stderr []byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return errors.Join(
		os.WriteFile(filepath.Join(dir, StdoutLog), stdout, 0o644),
		os.WriteFile(filepath.Join(dir, StderrLog), stderr, 0o644),
	)
}

// replaceExpected replaces the test's expected-output by the actual output, without the
// logs, after checking that it reads as an output directory.
func replaceExpected(t Test, actualDir string) error {
	if _, err := contract.ReadOutputDir(actualDir, contract.ReadOptions{}); err != nil {
		return fmt.Errorf("the actual output is not a valid output directory: %w", err)
	}
	if err := os.Remove(filepath.Join(actualDir, StdoutLog)); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(actualDir, StderrLog)); err != nil {
		return err
	}
	if err := os.RemoveAll(t.ExpectedDir()); err != nil {
		return err
	}
	return os.CopyFS(t.ExpectedDir(), os.DirFS(actualDir))
}

// tail returns the last lines of an operator's stderr, indented, for a failure message.
func tail(stderr []byte) string {
	lines := strings.Split(strings.TrimRight(string(stderr), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return "; its stderr ends with:\n" + indent(strings.Join(lines, "\n"))
}
