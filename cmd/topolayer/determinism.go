package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/internal/mom/determinism"
	"github.com/topolayer/topolayer/internal/mom/runner"
)

// determinismFormats are the values of `topolayer test determinism -o`.
var determinismFormats = []string{"table", "json", "yaml"}

// TestDeterminismOptions are the options of `topolayer test determinism`.
type TestDeterminismOptions struct {
	OperatorBinary string        // --operator-binary
	InputDir       string        // --input-dir
	Runs           int           // --runs
	Now            string        // --now
	Controllers    []string      // --controllers
	OutputDir      string        // --output-dir
	Timeout        time.Duration // --timeout
	Output         string        // -o

	now time.Time // set by Complete
	IOStreams
}

// NewCmdTestDeterminism builds `topolayer test determinism`.
func NewCmdTestDeterminism(streams IOStreams) *cobra.Command {
	o := &TestDeterminismOptions{Runs: determinism.DefaultRuns, Timeout: 30 * time.Second, Output: "table", IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "determinism --operator-binary BIN --input-dir DIR [--runs N] [--now RFC3339] [--controllers A,B] [-o table|json|yaml]",
		Short: "Run an operator several times on the same inputs and name the controllers whose outputs differ",
		Long: `Determinism runs the operator's apply-configuration --runs times on the same --input-dir, with
the same --now and --controllers, in the sandbox of ` + "`topolayer run`" + `, and compares what each
controller wrote: the objects it wrote in some runs and not in others, and those whose bodies
differ. Controllers are the metadata's controllerInstanceName; events, whose names are random,
are compared by involved object, reason and message under "(events)"; each controller's
entry in controller-results.yaml and the operator's exit code ("(exit code)") are compared
too.

The multi-operator-manager contract runs an operator's controllers in a random order on
purpose: a controller whose output changes from run to run on the same inputs depends on
another controller of the same process (or on chance), and converges under ` + "`topolayer run`" + `
only by luck. An object written with "a different body in each run" is more likely random
content (a generated key) than order.

The table shows, per controller that differs, in how many runs its outputs differ from its
most common outputs, how many objects differ, and one of them; -o json or yaml shows every
object with the runs (numbered from 1) that wrote it. An operator that exits non-zero is
compared like one that succeeds; one that times out or is interrupted stops the check.

Determinism exits 1 when some controller's outputs differ between runs, 0 when none do.`,
		Example: `  # The sample operator is deterministic: exit status 0
  go build -o bin/sample-operator ./cmd/sample-operator
  topolayer test determinism --operator-binary bin/sample-operator \
    --input-dir examples/sample-operators/tests/sample-operator/defaults/input-dir --runs 3

  # Every object that differs, with the runs that wrote it, keeping the outputs to look at
  topolayer test determinism --operator-binary bin/sample-operator \
    --input-dir examples/sample-operators/tests/sample-operator/defaults/input-dir \
    --now 2024-10-14T22:38:20Z --output-dir /tmp/determinism -o yaml`,
		Args: cobra.NoArgs,
		RunE: cli.RunCommand(o),
	}
	cmd.Flags().StringVar(&o.OperatorBinary, "operator-binary", o.OperatorBinary, "the operator's binary (a name without a slash is looked up in PATH)")
	cmd.Flags().StringVar(&o.InputDir, "input-dir", o.InputDir, "the input directory every run reads")
	cmd.Flags().IntVar(&o.Runs, "runs", o.Runs, "number of runs (at least 2)")
	cmd.Flags().StringVar(&o.Now, "now", o.Now, "the --now of every run, RFC 3339 (default: the time the check starts, the same for every run)")
	cmd.Flags().StringSliceVar(&o.Controllers, "controllers", o.Controllers, "run only these controllers (the operator's --controllers)")
	cmd.Flags().StringVar(&o.OutputDir, "output-dir", o.OutputDir, "keep each run's output in DIR/run-N (DIR must not hold run-N directories); default a temporary directory, removed")
	cmd.Flags().DurationVar(&o.Timeout, "timeout", o.Timeout, "bound on each run")
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "output format: "+strings.Join(determinismFormats, "|"))
	return cmd
}

// Complete parses --now.
func (o *TestDeterminismOptions) Complete() error {
	if o.Now == "" {
		o.now = time.Now().UTC().Truncate(time.Second)
		return nil
	}
	t, err := time.Parse(time.RFC3339, o.Now)
	if err != nil {
		return cli.UsageErrorf("--now %q: not RFC 3339 (2024-10-14T22:38:20Z): %w", o.Now, err)
	}
	o.now = t
	return nil
}

// Validate checks the flags without side effects.
func (o *TestDeterminismOptions) Validate() error {
	errs := requiredFlags([]flagValue{{"--operator-binary", o.OperatorBinary}, {"--input-dir", o.InputDir}})
	if o.Runs < 2 {
		errs = append(errs, fmt.Errorf("--runs %d: at least 2 runs are needed to compare", o.Runs))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout %s: must be positive", o.Timeout))
	}
	if !slices.Contains(determinismFormats, o.Output) {
		errs = append(errs, fmt.Errorf("-o %q: must be one of %s", o.Output, strings.Join(determinismFormats, ", ")))
	}
	return errors.Join(errs...)
}

// Run runs the check, prints the report on Out, and fails when a controller differs.
func (o *TestDeterminismOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	work := o.OutputDir
	if work == "" {
		dir, err := os.MkdirTemp("", "topolayer-determinism-")
		if err != nil {
			return fmt.Errorf("determinism check: %w", err)
		}
		defer os.RemoveAll(dir)
		work = dir
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return fmt.Errorf("determinism check: --output-dir: %w", err)
	}
	p := startProgress(o.ErrOut, fmt.Sprintf("running %s %d times", o.OperatorBinary, o.Runs))
	report, err := determinism.Check(ctx, determinism.Options{
		Runner:  &runner.Exec{Command: []string{o.OperatorBinary}, Limits: runner.Limits{Timeout: o.Timeout}},
		Request: runner.Request{InputDir: o.InputDir, Now: o.now, Controllers: o.Controllers},
		Runs:    o.Runs,
		WorkDir: work,
	})
	p.Stop()
	if err != nil {
		return err
	}
	printed, err := printData(o.Out, o.Output, report)
	if err == nil && !printed {
		err = printDeterminismTable(o.Out, report, o.now)
	}
	if err != nil {
		return err
	}
	if !report.Deterministic() {
		names := make([]string, len(report.Nondeterministic))
		for i, c := range report.Nondeterministic {
			names[i] = c.Name
		}
		return fmt.Errorf("outputs differ between runs on the same inputs: %s", strings.Join(names, ", "))
	}
	return nil
}

// printDeterminismTable writes one line per controller that differs, then a summary.
func printDeterminismTable(w io.Writer, r *determinism.Report, now time.Time) error {
	if !r.Deterministic() {
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "CONTROLLER\tRUNS DIFFERING\tOBJECTS\tEXAMPLE")
		for _, c := range r.Nondeterministic {
			ex := c.Objects[0]
			what := ex.Object
			if ex.Action != "" {
				what = string(ex.Action) + " " + what
			}
			fmt.Fprintf(tw, "%s\t%d/%d\t%d\t%s: %s\n", c.Name, c.RunsDiffering, r.Runs, len(c.Objects), what, ex.Difference)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	differ, also := 0, ""
	for _, c := range r.Nondeterministic {
		switch c.Name {
		case determinism.EventsController:
			also += ", and the events"
		case determinism.ExitCodeController:
			also += ", and the exit code"
		default:
			differ++
		}
	}
	_, err := fmt.Fprintf(w, "%d of %d controllers differ across %d runs%s (--now %s)\n",
		differ, len(r.Checked), r.Runs, also, now.Format(time.RFC3339))
	return err
}
