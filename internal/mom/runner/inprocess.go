package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/topolayer/topolayer/contract"
)

// Func is an operator's apply-configuration as a Go function: read req.InputDir, write
// mutations to req.OutputDir (absolute paths; the directory exists and is empty). It should
// return when ctx is done.
type Func func(ctx context.Context, req Request) error

// InProcess runs a Go function as an operator, in the runner's process and without a
// sandbox: the function has the runner's network, environment and files.
//
//   - A panic is recovered into a *PanicError with the stack; other operators keep running.
//   - Limits.Timeout is a deadline on the function's context. A function that returns at the
//     deadline yields a *TimeoutError. A function that ignores its context is abandoned: Run
//     returns a *TimeoutError with Abandoned set shortly after the deadline, and the
//     goroutine leaks until the function returns by itself, possibly still writing to the
//     output directory.
//   - Limits.OutputSize is checked after the function returns.
//   - Limits.Memory is ignored.
//
// An error the function returns is returned wrapped, naming the operator, with Result.ExitCode
// set to 1.
type InProcess struct {
	// Name names the operator in results, errors and logs. Request.Operator overrides it.
	Name string
	// Func is the operator's apply-configuration.
	Func Func
	// Inputs is what Resources reports the operator reads; nil reports nothing.
	Inputs *contract.InputResources
	// Outputs is what Resources reports the operator may write; nil reports nothing.
	Outputs *contract.OutputResources
	// Limits bound each run; Memory is ignored.
	Limits Limits
}

var _ Runner = (*InProcess)(nil)

// abandonGrace is how long Run waits, after the deadline, for a function to return before it
// abandons it.
const abandonGrace = 100 * time.Millisecond

// errTimedOut is the cause of a context that Limits.Timeout ended.
var errTimedOut = errors.New("operator timeout")

// Resources returns the declared Inputs and Outputs (empty declarations when nil). The
// returned values are shared with the runner; do not modify them.
func (r *InProcess) Resources(context.Context) (*contract.InputResources, *contract.OutputResources, error) {
	return declared(r.Inputs, r.Outputs)
}

// declared returns the declarations, empty ones for nil.
func declared(in *contract.InputResources, out *contract.OutputResources) (*contract.InputResources, *contract.OutputResources, error) {
	if in == nil {
		in = &contract.InputResources{}
	}
	if out == nil {
		out = &contract.OutputResources{}
	}
	return in, out, nil
}

// Run calls Func once with the request, its directories made absolute.
func (r *InProcess) Run(ctx context.Context, req Request) (*Result, error) {
	op := operatorName(req, r.Name)
	if r.Func == nil {
		return nil, fmt.Errorf("operator %q: no function", op)
	}
	if err := noEnv(op, req); err != nil {
		return nil, err
	}
	in, out, err := prepareDirs(op, req)
	if err != nil {
		return nil, err
	}
	req.Operator, req.InputDir, req.OutputDir = op, in, out
	res, fnErr, err := contain(ctx, op, r.Limits.Timeout, func(ctx context.Context) error { return r.Func(ctx, req) })
	if err != nil {
		// The function did not finish before its context ended; its output is partial and
		// left for inspection.
		res.OutputBytes, _ = dirSize(out)
		return res, err
	}
	var panicErr *PanicError
	if fnErr != nil && !errors.As(fnErr, &panicErr) {
		fnErr = fmt.Errorf("operator %q: %s: %w", op, cmdApplyConfiguration, fnErr)
	}
	size, sizeErr := checkOutputSize(op, out, r.Limits.OutputSize)
	res.OutputBytes = size
	return res, errors.Join(fnErr, sizeErr)
}

// contain calls fn in a goroutine under timeout (0: none), recovering a panic into a
// *PanicError, and waits for it. It returns the run's Result (ExitCode 1 when fn failed,
// panicked or did not finish), fn's error (or the *PanicError), and err when fn did not
// finish: a *TimeoutError at the timeout (abandoned or not), or an error wrapping ctx's when
// ctx ended and fn ignored it.
func contain(ctx context.Context, op string, timeout time.Duration, fn func(context.Context) error) (res *Result, fnErr, err error) {
	runCtx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		runCtx, cancel = context.WithTimeoutCause(ctx, timeout, errTimedOut)
	}
	defer cancel()

	log := logger(ctx)
	log.V(1).Info("operator started", "command", cmdApplyConfiguration, "sandbox", sandboxInProcess)
	start := time.Now()
	done := make(chan error, 1) // buffered: an abandoned function must not block forever
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- &PanicError{Operator: op, Value: v, Stack: string(debug.Stack())}
			}
		}()
		done <- fn(runCtx)
	}()

	abandoned := false
	select {
	case fnErr = <-done:
	case <-runCtx.Done():
		grace := time.NewTimer(abandonGrace)
		select {
		case fnErr = <-done:
		case <-grace.C:
			abandoned = true
		}
		grace.Stop()
	}
	res = &Result{Operator: op, Duration: time.Since(start), Sandbox: sandboxInProcess}
	log.V(1).Info("operator finished", "command", cmdApplyConfiguration, "duration", res.Duration, "error", fnErr)
	if fnErr != nil || abandoned {
		res.ExitCode = 1
	}
	var panicErr *PanicError
	if abandoned || (fnErr != nil && !errors.As(fnErr, &panicErr) && runCtx.Err() != nil) {
		if errors.Is(context.Cause(runCtx), errTimedOut) {
			return res, fnErr, &TimeoutError{Operator: op, Command: cmdApplyConfiguration, Timeout: timeout, Abandoned: abandoned}
		}
		if abandoned {
			return res, fnErr, fmt.Errorf("operator %q: %s: abandoned: %w", op, cmdApplyConfiguration, ctx.Err())
		}
	}
	return res, fnErr, nil
}

// sandboxInProcess is Result.Sandbox of the runners that run Go functions.
const sandboxInProcess = "in-process"
