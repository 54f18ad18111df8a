package determinism

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/mom/runner"
)

// DefaultRuns is how many runs Check makes when Options.Runs is 0: with controllers in a
// random order, a controller that depends on the order of two others shows in 10 runs with a
// probability of 1 - 2^-9.
const DefaultRuns = 10

// Options configure Check.
type Options struct {
	// Runner runs the operator (runner.Exec for a binary, in the sandbox of topolayer run).
	Runner runner.Runner
	// Request is the run: InputDir, Now and Controllers are used; OutputDir is ignored. Now
	// should be set: without it, an operator uses the wall clock and its timestamps differ.
	Request runner.Request
	// Runs is the number of runs; 0 means DefaultRuns.
	Runs int
	// WorkDir receives each run's output directory, run-1, run-2...; it must exist and hold no
	// such directories.
	WorkDir string
	// OnRun, when set, is called after each run, with its number (from 1) and result.
	OnRun func(run int, res *runner.Result)
}

// Check runs the operator Options.Runs times on the same inputs and compares the outputs
// (Compare). A run that exits non-zero (or, in process, fails or panics) is compared like
// the others, its exit code too; a run that cannot start, times out, is canceled, writes too
// much or writes an output directory that contract.ReadOutputDir refuses stops the check
// with an error naming the run.
func Check(ctx context.Context, opts Options) (*Report, error) {
	if opts.Runner == nil {
		return nil, errors.New("determinism check: no runner")
	}
	n := opts.Runs
	if n == 0 {
		n = DefaultRuns
	}
	if n < 2 {
		return nil, fmt.Errorf("determinism check: %d runs: at least 2 are needed to compare", n)
	}
	runs := make([]Run, 0, n)
	for i := 1; i <= n; i++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("determinism check: before run %d: %w", i, err)
		}
		req := opts.Request
		req.OutputDir = filepath.Join(opts.WorkDir, fmt.Sprintf("run-%d", i))
		res, err := opts.Runner.Run(ctx, req)
		if err != nil && !ranToEnd(ctx, res, err) {
			return nil, fmt.Errorf("determinism check: run %d: %w", i, err)
		}
		if opts.OnRun != nil {
			opts.OnRun(i, res)
		}
		out, err := contract.ReadOutputDirContext(ctx, req.OutputDir, contract.ReadOptions{MaxTotalSize: contract.DefaultMaxOutputSize})
		if err != nil {
			return nil, fmt.Errorf("determinism check: run %d: read %s: %w", i, req.OutputDir, err)
		}
		code := 0
		if res != nil {
			code = res.ExitCode
		}
		runs = append(runs, Run{Output: out, ExitCode: code})
	}
	return Compare(runs), nil
}

// ranToEnd reports whether a run that ended with err still has a complete output to
// compare: the operator ran to its end and failed, rather than being stopped.
func ranToEnd(ctx context.Context, res *runner.Result, err error) bool {
	var timeout *runner.TimeoutError
	var tooLarge *runner.OutputTooLargeError
	return res != nil && ctx.Err() == nil && !errors.As(err, &timeout) && !errors.As(err, &tooLarge)
}
