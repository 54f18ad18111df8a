package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/topolayer/topolayer/contract"
)

// ObjectsRequest is one apply-configuration run over objects in memory.
type ObjectsRequest struct {
	// Operator names the operator in results, errors and logs; empty means the runner's Name.
	Operator string
	// Inputs are the objects the operator reads: what its input directory would hold
	// (contract.NewInputDir makes the directory of them). The runner does not modify them.
	Inputs []*contract.InputObject
	// Discovery is the inputs' discovery; nil means contract.DefaultDiscovery().
	Discovery *contract.Discovery
	// Now is the time the operator sees; zero means the current time.
	Now time.Time
	// Controllers selects controllers as --controllers does; empty means all.
	Controllers []string
}

// ObjectsFunc is an operator's apply-configuration over objects in memory: it reads
// req.Inputs and returns the output directory it would have written, also when it fails
// (with controller-results saying which controllers did), or nil when nothing could run.
type ObjectsFunc func(ctx context.Context, req ObjectsRequest) (*contract.OutputDir, error)

// ObjectRunner is a Runner that can also run over objects in memory: no input directory is
// written and no output directory read. The manager prefers RunObjects when a runner has it.
type ObjectRunner interface {
	Runner
	// RunObjects runs apply-configuration once over req.Inputs and returns its outputs,
	// checked as a reader checks a directory (contract.CheckOutputDir), and the Result; the
	// outputs are returned with an error too when the operator failed but wrote some.
	RunObjects(ctx context.Context, req ObjectsRequest) (*contract.OutputDir, *Result, error)
}

// InMemory runs an operator built with the operator SDK (sdk.Operator.InMemory) in the
// runner's process, over objects in memory: no fork, no exec, no directory on disk. It is
// contained as InProcess is: panics are recovered into a *PanicError, Limits.Timeout is a
// deadline on the function's context (a function that ignores it is abandoned), the output
// size is checked against Limits.OutputSize as the bodies and options would be written
// (*OutputTooLargeError), Limits.Memory is ignored. A function that fails returns what an
// exec'd operator that exits with code 1 does: a *CrashError, with its outputs, so that a
// failed controller is handled as it is for a binary (config.ApplyOnControllerFailure).
//
// Run, the directory form, reads the input directory, calls the same function and writes
// the output directory: the harness and `topolayer test` run it as they run binaries.
type InMemory struct {
	// Name names the operator in results, errors and logs. A request's Operator overrides it.
	Name string
	// Func is the operator's apply-configuration over objects.
	Func ObjectsFunc
	// Inputs is what Resources reports the operator reads; nil reports nothing.
	Inputs *contract.InputResources
	// Outputs is what Resources reports the operator may write; nil reports nothing.
	Outputs *contract.OutputResources
	// Limits bound each run; Memory is ignored.
	Limits Limits
	// Read bounds the outputs as contract.ReadOptions bound a directory's files
	// (MaxTotalSize defaults to Limits.OutputSize); the zero value is the reader's defaults.
	Read contract.ReadOptions
}

var _ ObjectRunner = (*InMemory)(nil)

// Resources returns the declared Inputs and Outputs (empty declarations when nil). The
// returned values are shared with the runner; do not modify them.
func (r *InMemory) Resources(context.Context) (*contract.InputResources, *contract.OutputResources, error) {
	return declared(r.Inputs, r.Outputs)
}

// RunObjects calls Func once over req.Inputs, contained, and checks what it returns.
func (r *InMemory) RunObjects(ctx context.Context, req ObjectsRequest) (*contract.OutputDir, *Result, error) {
	op := operatorName(Request{Operator: req.Operator}, r.Name)
	if r.Func == nil {
		return nil, nil, fmt.Errorf("operator %q: no function", op)
	}
	req.Operator = op
	var out *contract.OutputDir
	res, fnErr, err := contain(ctx, op, r.Limits.Timeout, func(ctx context.Context) error {
		var err error
		out, err = r.Func(ctx, req)
		return err
	})
	if err != nil {
		return nil, res, err // an abandoned function may still be changing out
	}
	var panicErr *PanicError
	switch {
	case errors.As(fnErr, &panicErr):
		return nil, res, fnErr
	case fnErr != nil && out == nil:
		return nil, res, fmt.Errorf("operator %q: %s: %w", op, cmdApplyConfiguration, fnErr)
	case fnErr != nil:
		fnErr = &CrashError{Operator: op, Command: cmdApplyConfiguration, ExitCode: 1, Stderr: fnErr.Error(), Err: fnErr}
	case out == nil:
		return nil, res, fmt.Errorf("operator %q: %s: no outputs and no error", op, cmdApplyConfiguration)
	}
	res.OutputBytes = outputSize(out)
	if limit := r.Limits.OutputSize; limit > 0 && res.OutputBytes > limit {
		return nil, res, &OutputTooLargeError{Operator: op, Dir: "(in memory)", Size: res.OutputBytes, Limit: limit}
	}
	read := r.Read
	if read.MaxTotalSize == 0 {
		read.MaxTotalSize = r.Limits.OutputSize
	}
	if err := contract.CheckOutputDir(out, read); err != nil {
		return nil, res, errors.Join(fnErr, fmt.Errorf("operator %q: outputs: %w", op, err))
	}
	return out, res, fnErr
}

// Run is RunObjects over a directory: it reads req.InputDir, runs Func over its objects and
// writes the outputs (also those of a failed run) to req.OutputDir.
func (r *InMemory) Run(ctx context.Context, req Request) (*Result, error) {
	op := operatorName(req, r.Name)
	if err := noEnv(op, req); err != nil {
		return nil, err
	}
	in, outDir, err := prepareDirs(op, req)
	if err != nil {
		return nil, err
	}
	dir, err := contract.ReadInputDir(in, contract.ReadOptions{})
	if err != nil {
		return nil, fmt.Errorf("operator %q: %w", op, err)
	}
	out, res, runErr := r.RunObjects(ctx, ObjectsRequest{Operator: op, Inputs: dir.Objects(), Discovery: dir.Discovery, Now: req.Now, Controllers: req.Controllers})
	if out != nil {
		if err := contract.WriteOutputDir(outDir, out, contract.WriteOptions{}); err != nil {
			return res, errors.Join(runErr, fmt.Errorf("operator %q: write the output dir: %w", op, err))
		}
	}
	return res, runErr
}

// outputSize is how many bytes the outputs' bodies and options would take on disk.
func outputSize(out *contract.OutputDir) int64 {
	var n int64
	for _, m := range out.Mutations {
		n += int64(len(m.Body) + len(m.Options))
	}
	return n
}
