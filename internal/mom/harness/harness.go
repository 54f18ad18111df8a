package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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

// PreserveReplaceExpectedOutput is the preserve policy upstream's --replace-expected-output
// sets. Given alone as --preserve-policy, upstream does not rewrite expected-output with it:
// each operator writes into OutputDir/<test> as usual, its logs are removed, nothing is
// compared, and every test passes. Options.Update is the rewrite.
const PreserveReplaceExpectedOutput = "ReplaceExpectedOutput"

// JUnitFile is the JUnit XML report Run writes into the output directory.
const JUnitFile = "junit.xml"

// Options configure a run of tests. The zero value of every optional field means its default.
type Options struct {
	// TestDir is searched, at any depth, for test directories.
	TestDir string
	// OutputDir receives each test's actual output at OutputDir/<test name>, and junit.xml.
	// It is removed and recreated first, as upstream does. Empty means a temporary
	// directory, removed at the end unless an output is kept.
	OutputDir string
	// Command replaces every test's binaryName: the program and leading arguments. Empty
	// means each test.yaml's binaryName.
	Command []string
	// Runner runs the operator; nil means Exec.
	Runner Runner
	// Timeout bounds each operator run; 0 means DefaultTimeout.
	Timeout time.Duration
	// PreservePolicy is upstream's --preserve-policy: empty removes the actual outputs of
	// passing tests, PreserveReplaceExpectedOutput records each output in OutputDir/<test>
	// without its logs and compares nothing, any other value (upstream's scripts use
	// KeepAlways) keeps every output.
	PreservePolicy string
	// Update replaces each test's expected-output with what the operator writes, instead of
	// comparing: upstream's --replace-expected-output. An expected-output need not exist.
	Update bool
	// WalkTestData looks for tests inside tests' input-dir and expected-output folders too,
	// as upstream does: a file test.yaml there (an input object named test) makes its
	// folder a test, which is not valid, and nothing runs.
	WalkTestData bool
	// OnStart and OnResult, when set, are called before and after each test runs, so that
	// a caller can show progress and report each failure as soon as it is known.
	OnStart  func(Test)
	OnResult func(Result)
	// KeepOutputs keeps the actual outputs of passing tests too: the policy KeepAlways.
	KeepOutputs bool
	// AllowNoTests runs zero tests, and passes, when TestDir holds none, as upstream does;
	// otherwise that is an error (ErrNoTests).
	AllowNoTests bool
}

// replacing reports whether expected-output is rewritten.
func (o Options) replacing() bool { return o.Update }

// recording reports whether the outputs are written without their logs and not compared:
// when rewriting expected-output, and under upstream's policy ReplaceExpectedOutput.
func (o Options) recording() bool {
	return o.Update || o.PreservePolicy == PreserveReplaceExpectedOutput
}

func (o Options) keeping() bool { return o.KeepOutputs || o.PreservePolicy != "" }

// Result is the outcome of one test.
type Result struct {
	// Test is the test that ran.
	Test Test
	// Problems say why the test failed, each a readable message; none means it passed.
	Problems []string
	// Warnings say what passed the upstream harness but topolayer's own readers (those of
	// `topolayer run`) would refuse, or how an outcome was reached; they do not fail it.
	Warnings []string
	// Updated is true when the test's expected-output was rewritten.
	Updated bool
	// Recorded is true when the output was written and not compared (the policy
	// ReplaceExpectedOutput without Update).
	Recorded bool
	// Stdout and Stderr are what the operator wrote on each, at most maxLogSize bytes of
	// their ends.
	Stdout, Stderr string
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

// PrintResult writes one test's line, PASS, FAIL, UPDATED or RECORDED, its problems and
// warnings indented below it, and where a failing output was kept.
func PrintResult(w io.Writer, res Result) {
	verdict := "PASS"
	switch {
	case !res.Passed():
		verdict = "FAIL"
	case res.Updated:
		verdict = "UPDATED"
	case res.Recorded:
		verdict = "RECORDED"
	}
	name := ""
	if res.Test.Description != nil {
		name = res.Test.Description.TestName
	}
	fmt.Fprintf(w, "%-7s %s (%s) %s\n", verdict, res.Test.Name, name, res.Duration.Round(time.Millisecond))
	for _, p := range res.Problems {
		fmt.Fprintln(w, indent(p))
	}
	for _, p := range res.Warnings {
		fmt.Fprintln(w, indent("warning: "+p))
	}
	if !res.Passed() && res.OutputDir != "" && isDir(res.OutputDir) {
		fmt.Fprintf(w, "    actual output kept in %s\n", res.OutputDir)
	}
}

// Print writes one line per test, PASS, FAIL or UPDATED, each failure's problems and each
// warning indented below it, where failing outputs were kept, and a summary line.
func (r *Report) Print(w io.Writer) {
	for _, res := range r.Results {
		PrintResult(w, res)
	}
	r.PrintSummary(w)
}

// PrintSummary writes the line that counts the tests, passed and failed.
func (r *Report) PrintSummary(w io.Writer) {
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

// Run discovers the tests under opts.TestDir and runs each as the upstream harness does:
// the output directory is removed and recreated, each operator's apply-configuration runs
// over the test's input-dir into OutputDir/<test>, pre-created (or straight into
// expected-output when replacing it), then, unless replacing, its output is compared with
// expected-output. junit.xml is written into the output directory at the end. Run returns
// an error only when the tests cannot run at all (discovery, the output directory);
// failures are in the report.
func Run(ctx context.Context, opts Options) (*Report, error) {
	tests, err := discover(opts.TestDir, !opts.replacing(), opts.WalkTestData)
	if err != nil && !(opts.AllowNoTests && errors.Is(err, ErrNoTests)) {
		return nil, err
	}
	root, temp := opts.OutputDir, false
	if root == "" {
		if root, err = os.MkdirTemp("", "topolayer-test-"); err != nil {
			return nil, err
		}
		temp = true
	} else {
		if err := os.RemoveAll(root); err != nil {
			return nil, fmt.Errorf("remove the output directory: %w", err)
		}
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, fmt.Errorf("create the output directory: %w", err)
		}
	}
	report := &Report{}
	kept := false
	for _, t := range tests {
		if ctx.Err() != nil {
			break
		}
		outDir := filepath.Join(root, filepath.FromSlash(t.Name))
		if opts.replacing() {
			outDir = t.ExpectedDir()
		}
		if opts.OnStart != nil {
			opts.OnStart(t)
		}
		res := RunTest(ctx, t, outDir, opts)
		if opts.OnResult != nil {
			opts.OnResult(res)
		}
		switch {
		case opts.replacing():
		case res.Passed() && !opts.keeping():
			_ = os.RemoveAll(res.OutputDir)
		default:
			kept = true
		}
		report.Results = append(report.Results, res)
	}
	if err := report.WriteJUnit(filepath.Join(root, JUnitFile)); err != nil {
		return report, err
	}
	if kept || !temp {
		report.OutputDir = root
	} else {
		_ = os.RemoveAll(root)
	}
	return report, ctx.Err()
}

// RunTest runs one test with its actual output in outDir, created if missing (removed first
// when replacing expected-output), with stdout.log and stderr.log created in it before the
// operator starts, as upstream does.
//
// The outcome follows the upstream harness: exit zero when test.yaml wants a non-zero exit
// (desiredError: NonZeroReturn), or non-zero when it does not, fails the test, and the
// outputs are still compared; an operator killed at the timeout exited non-zero; an operator
// that could not run fails the test without a comparison. When replacing expected-output,
// the operator writes into it, its logs are removed afterwards, and nothing is compared.
func RunTest(ctx context.Context, t Test, outDir string, opts Options) Result {
	res := Result{Test: t, OutputDir: outDir, Warnings: slices.Clone(t.Warnings)}
	fail := func(format string, args ...any) { res.Problems = append(res.Problems, fmt.Sprintf(format, args...)) }
	if opts.recording() {
		if err := os.RemoveAll(outDir); err != nil {
			fail("remove %s: %v", outDir, err)
			return res
		}
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		fail("create the actual output directory: %v", err)
		return res
	}
	stdout, err := os.Create(filepath.Join(outDir, StdoutLog))
	if err != nil {
		fail("create %s: %v", StdoutLog, err)
		return res
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(outDir, StderrLog))
	if err != nil {
		fail("create %s: %v", StderrLog, err)
		return res
	}
	defer stderr.Close()

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
	start := time.Now()
	runErr := runner(runCtx, argv, stdout, stderr)
	res.Duration = time.Since(start)
	timedOut := errors.Is(runCtx.Err(), context.DeadlineExceeded)
	cancel()
	_ = stdout.Close()
	_ = stderr.Close()
	stderrLog, _ := os.ReadFile(filepath.Join(outDir, StderrLog))
	stdoutLog, _ := os.ReadFile(filepath.Join(outDir, StdoutLog))
	res.Stdout, res.Stderr = logEnd(stdoutLog), logEnd(stderrLog)

	if opts.recording() {
		_ = os.Remove(filepath.Join(outDir, StdoutLog))
		_ = os.Remove(filepath.Join(outDir, StderrLog))
		res.Updated, res.Recorded = opts.replacing(), !opts.replacing()
		if runErr != nil {
			where := "replaced expected-output"
			if res.Recorded {
				where = "was recorded"
			}
			res.Warnings = append(res.Warnings, fmt.Sprintf("the operator did not exit zero (%v); its output %s all the same, as upstream does", runErr, where))
		}
		return res
	}

	code, exited := exitCode(runErr)
	wantNonZero := t.Description.DesiredError == contract.DesiredErrorNonZeroReturn
	killed := ""
	if timedOut && exited {
		killed = fmt.Sprintf(" (killed: it did not finish within %s)", timeout)
	}
	switch {
	case runErr != nil && !exited:
		fail("%s could not run: %v%s", strings.Join(argv, " "), runErr, tail(stderrLog))
		return res
	case runErr == nil && wantNonZero:
		fail("the operator exited 0, but test.yaml says desiredError: %s", contract.DesiredErrorNonZeroReturn)
	case runErr != nil && !wantNonZero:
		fail("the operator exited with status %d%s%s", code, killed, tail(stderrLog))
	case killed != "":
		res.Warnings = append(res.Warnings, fmt.Sprintf("the operator was killed at the %s timeout; upstream counts that as the non-zero exit test.yaml wants", timeout))
	}
	if !isDir(outDir) {
		if runErr == nil {
			fail("the operator removed its output directory")
			return res
		}
		if err := os.MkdirAll(outDir, 0o755); err != nil { // no output at all, as upstream reads it
			fail("create the actual output directory: %v", err)
			return res
		}
	}
	res.Problems = append(res.Problems, Compare(t.ExpectedDir(), outDir)...)
	if res.Passed() {
		res.Warnings = append(res.Warnings, strictWarnings("expected", t.ExpectedDir())...)
		res.Warnings = append(res.Warnings, strictWarnings("actual", outDir)...)
	}
	return res
}

// maxLogSize bounds the operator's stdout and stderr kept in a Result (and junit.xml).
const maxLogSize = 64 << 10

// logEnd is the end of a log, at most maxLogSize bytes of it.
func logEnd(log []byte) string {
	if len(log) > maxLogSize {
		return "…" + string(log[len(log)-maxLogSize:])
	}
	return string(log)
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
