package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/internal/mom/harness"
)

// TestCmdOptions are the options of `topolayer test`.
type TestCmdOptions struct {
	TestDir         string        // --test-dir
	OperatorCommand string        // --operator-command
	OutputDir       string        // --output-dir
	Timeout         time.Duration // --timeout
	Update          bool          // --update
	KeepOutputs     bool          // --keep-outputs

	IOStreams
}

// NewCmdTest builds `topolayer test`.
func NewCmdTest(streams IOStreams) *cobra.Command {
	o := &TestCmdOptions{Timeout: harness.DefaultTimeout, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "test --test-dir DIR [--operator-command CMD]",
		Short: "Run an operator's declarative apply-configuration tests (test.yaml, input-dir, expected-output)",
		Long: `Test runs the tests of the multi-operator-manager contract's harness: every directory under
--test-dir that holds a test.yaml is a test, with an input-dir and an expected-output. For each,
the operator's apply-configuration runs over input-dir into a fresh directory (with --now and
--controllers from test.yaml, under a timeout), and its output is compared with
expected-output as the upstream harness does: controller-results.yaml must be equal, and per
class the recorded requests must be the same set, byte for byte in their bodies and options,
ignoring events, file names and order. An undeclared write (Unspecified) always fails.

The operator is test.yaml's binaryName (a bare name is looked up in PATH), or
--operator-command for every test. It runs with topolayer's environment, in a pre-created
output directory, as under the upstream harness. Verdicts are the upstream harness's; what
topolayer run's stricter readers would refuse is a warning. ` + "`topolayer test apply-configuration`" + `
takes the upstream harness's command line instead.

Each failure is explained with a unified diff; failing outputs are kept and their place
printed. Test exits non-zero when any test fails. With --update, expected-output is rewritten
from what the operator writes instead.`,
		Example: `  # Run the sample operator's tests against a freshly built binary
  go build -o bin/sample-operator ./cmd/sample-operator
  topolayer test --test-dir examples/sample-operators/tests/sample-operator --operator-command bin/sample-operator

  # Regenerate their expected outputs after a deliberate change, then review the diff
  topolayer test --test-dir examples/sample-operators/tests/sample-operator --operator-command bin/sample-operator --update`,
		Args: cobra.NoArgs,
		RunE: cli.RunCommand(o),
	}
	cmd.AddCommand(NewCmdTestApplyConfiguration(streams), NewCmdTestDeterminism(streams))
	cmd.Flags().StringVar(&o.TestDir, "test-dir", o.TestDir, "directory searched, at any depth, for tests (directories with a test.yaml)")
	cmd.Flags().StringVar(&o.OperatorCommand, "operator-command", o.OperatorCommand, "the operator's command line, split on spaces, used instead of every test's binaryName")
	cmd.Flags().StringVar(&o.OutputDir, "output-dir", o.OutputDir, "where the actual outputs and junit.xml go, one directory per test; removed first; default a temporary directory")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", o.Timeout, "bound on each operator run")
	cmd.Flags().BoolVar(&o.Update, "update", o.Update, "rewrite each test's expected-output instead of comparing")
	cmd.Flags().BoolVar(&o.KeepOutputs, "keep-outputs", o.KeepOutputs, "keep the actual outputs of passing tests too")
	return cmd
}

// Validate checks the flags without side effects.
func (o *TestCmdOptions) Validate() error {
	var errs []error
	if o.TestDir == "" {
		errs = append(errs, errors.New("--test-dir is required"))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout %s: must be positive", o.Timeout))
	}
	return errors.Join(errs...)
}

// Run runs the tests, prints the report on Out, and fails when a test failed.
func (o *TestCmdOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	return runTests(ctx, o.IOStreams, harness.Options{
		TestDir:     o.TestDir,
		OutputDir:   o.OutputDir,
		Command:     strings.Fields(o.OperatorCommand),
		Timeout:     o.Timeout,
		Update:      o.Update,
		KeepOutputs: o.KeepOutputs,
	})
}

// runTests runs the tests, printing each result as soon as it is known (and, on a
// terminal, which test is running), then the summary; it fails when a test failed.
func runTests(ctx context.Context, streams IOStreams, opts harness.Options) error {
	var p *progress
	opts.OnStart = func(t harness.Test) { p = startProgress(streams.ErrOut, "test "+t.Name) }
	opts.OnResult = func(r harness.Result) {
		if p != nil {
			p.Stop()
		}
		harness.PrintResult(streams.Out, r)
	}
	report, err := harness.Run(ctx, opts)
	if report != nil {
		report.PrintSummary(streams.Out)
	}
	if err != nil {
		return err
	}
	return report.Err()
}

// TestApplyConfigurationOptions are the options of `topolayer test apply-configuration`,
// the upstream harness's command line.
type TestApplyConfigurationOptions struct {
	TestDir               string // --test-dir
	OutputDir             string // --output-dir
	PreservePolicy        string // --preserve-policy
	ReplaceExpectedOutput bool   // --replace-expected-output

	IOStreams
}

// NewCmdTestApplyConfiguration builds `topolayer test apply-configuration`.
func NewCmdTestApplyConfiguration(streams IOStreams) *cobra.Command {
	o := &TestApplyConfigurationOptions{IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "apply-configuration --test-dir DIR --output-dir DIR [--preserve-policy KeepAlways] [--replace-expected-output]",
		Short: "Run apply-configuration tests with the multi-operator-manager harness's command line and verdicts",
		Long: `A drop-in for ` + "`multi-operator-manager test apply-configuration`" + `: the same flags, the same
verdicts. Every directory under --test-dir that holds a test.yaml is a test; its binaryName
runs (relative to the working directory, or looked up in PATH) with topolayer's environment
under a 5 s timeout, writing into --output-dir/<test>, which is compared with the test's
expected-output. --output-dir is removed first; junit.xml is written into it, with each
operator's stdout and stderr. As upstream, a test.yaml inside a test's input-dir or
expected-output (an input object named test) makes its folder a test, which is refused.

--preserve-policy: empty removes the outputs of passing tests; ReplaceExpectedOutput, as
upstream, writes each output into --output-dir/<test> without its logs, compares nothing
and passes (it does not touch expected-output); any other value (KeepAlways) keeps every
output. --replace-expected-output deletes each test's expected-output and writes the
operator's output there instead. docs/harness.md lists every known difference from upstream.

Where the upstream harness passes a test that ` + "`topolayer run`" + ` would refuse (unknown keys,
stray files, an empty options file), the test passes with a warning saying why.`,
		Example: `  # The sample operator's tests, as multi-operator-manager runs them (sample-operator on PATH: make build, then PATH=bin:$PATH)
  topolayer test apply-configuration --test-dir examples/sample-operators/tests/sample-operator --output-dir /tmp/test-output --preserve-policy KeepAlways`,
		Args: cobra.NoArgs,
		RunE: cli.RunCommand(o),
	}
	cmd.Flags().StringVar(&o.TestDir, "test-dir", o.TestDir, "the directory where the tests are stored (recursive)")
	cmd.Flags().StringVar(&o.OutputDir, "output-dir", o.OutputDir, "the directory where the output is stored (removed first)")
	cmd.Flags().StringVar(&o.PreservePolicy, "preserve-policy", o.PreservePolicy, "empty: remove passing tests' outputs; ReplaceExpectedOutput: record the outputs without comparing; anything else (KeepAlways): keep all")
	cmd.Flags().BoolVar(&o.ReplaceExpectedOutput, "replace-expected-output", o.ReplaceExpectedOutput, "delete each test's expected-output and replace it with the operator's output")
	return cmd
}

// Validate checks the flags without side effects.
func (o *TestApplyConfigurationOptions) Validate() error {
	return errors.Join(requiredFlags([]flagValue{{"--test-dir", o.TestDir}, {"--output-dir", o.OutputDir}})...)
}

// Run runs the tests, prints the report on Out, and fails when a test failed.
func (o *TestApplyConfigurationOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	policy := o.PreservePolicy
	if o.ReplaceExpectedOutput {
		policy = harness.PreserveReplaceExpectedOutput
	}
	return runTests(ctx, o.IOStreams, harness.Options{
		TestDir: o.TestDir, OutputDir: o.OutputDir, PreservePolicy: policy, Update: o.ReplaceExpectedOutput,
		AllowNoTests: true, WalkTestData: true,
	})
}

// preservePolicies are the values of --preserve-policy that the shell completes; any other
// non-empty value keeps every output, as KeepAlways does.
var preservePolicies = []string{"KeepAlways", harness.PreserveReplaceExpectedOutput}
