package sdk

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/mom/runner"
)

// ApplyConfiguration is the contract's apply-configuration: it reads opts.InputDir, runs
// each selected controller once over it (each with its own fake client loaded from the
// input directory, reconciling every request until it stops asking to be requeued, makes no
// new write, or hits MaxReconciles), files every recorded write under the classes that
// OutputResources give it, and writes the output directory with controller-results.yaml.
//
// The output directory is written even when the run fails. The error joins every problem:
// failed controllers (ErrControllerFailed) and undeclared writes (ErrUndeclared, filed under
// Unspecified). The returned OutputDir is what was written, or nil when nothing could run.
func (o *Operator) ApplyConfiguration(ctx context.Context, opts Options) (*contract.OutputDir, error) {
	var errs []error
	if opts.InputDir == "" {
		errs = append(errs, errors.New("--input-dir is required"))
	}
	if opts.OutputDir == "" {
		errs = append(errs, errors.New("--output-dir is required"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(o.Validate(), err)
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	in, err := contract.ReadInputDir(opts.InputDir, contract.ReadOptions{})
	if err != nil {
		return nil, fmt.Errorf("read input directory: %w", err)
	}
	out, runErr := o.apply(ctx, in, opts.Now, opts.Controllers)
	if out == nil {
		return nil, runErr
	}
	if err := writeOutputDir(opts.OutputDir, out, contract.WriteOptions{NameKey: o.MetadataNameKey}); err != nil {
		return nil, errors.Join(runErr, fmt.Errorf("write output directory: %w", err))
	}
	return out, runErr
}

// ApplyObjects is ApplyConfiguration over objects in memory, for an in-process runner: the
// controllers read inputs (what the input directory would hold, see contract.NewInputDir,
// with disc as its discovery, nil for the default) and the output directory is returned, not
// written. Its results are the ones ApplyConfiguration writes for the same objects.
func (o *Operator) ApplyObjects(ctx context.Context, inputs []*contract.InputObject, disc *contract.Discovery, now time.Time, controllers []string) (*contract.OutputDir, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	in, err := contract.NewInputDir(inputs, disc)
	if err != nil {
		return nil, fmt.Errorf("inputs: %w", err)
	}
	return o.apply(ctx, in, now, controllers)
}

// InMemory returns a runner of the operator in the caller's process over objects in memory
// (runner.InMemory): what `topolayer run` and an embedding use instead of forking the
// operator's binary. Its Run, the directory form, behaves as the binary's apply-configuration.
func (o *Operator) InMemory(limits runner.Limits) *runner.InMemory {
	return &runner.InMemory{
		Name:    o.Name,
		Inputs:  &o.InputResources,
		Outputs: &o.OutputResources,
		Limits:  limits,
		Func: func(ctx context.Context, req runner.ObjectsRequest) (*contract.OutputDir, error) {
			return o.ApplyObjects(ctx, req.Inputs, req.Discovery, req.Now, req.Controllers)
		},
	}
}

// apply runs the selected controllers over in and returns the output directory they make;
// nil with the error when nothing could run.
func (o *Operator) apply(ctx context.Context, in *contract.InputDir, now time.Time, controllers []string) (*contract.OutputDir, error) {
	enabled, err := o.selectControllers(controllers)
	if err != nil {
		return nil, err
	}
	if now.IsZero() {
		now = time.Now()
	}
	env, err := newFakeEnv(o.scheme(), in, o.CRDs)
	if err != nil {
		return nil, err
	}
	logger := logr.FromContextOrDiscard(ctx).WithName("apply-configuration").WithValues("operator", o.Name)
	run := &runLog{}
	events, err := o.eventSource()
	if err != nil {
		return nil, err
	}

	var errs []error
	results := make([]contract.ControllerResult, 0, len(o.Controllers))
	for _, c := range o.Controllers {
		if !enabled[c.Name] {
			results = append(results, contract.ControllerResult{ControllerName: c.Name, Status: contract.ControllerSkipped})
			continue
		}
		res := o.runController(log.IntoContext(ctx, logger.WithValues("controller", c.Name)), c, env, run, events, now)
		logger.V(1).Info("controller finished", "controller", c.Name, "status", res.Status)
		results = append(results, res)
		if res.Status != contract.ControllerSucceeded {
			msgs := make([]string, 0, len(res.Errors))
			for _, e := range res.Errors {
				msgs = append(msgs, e.Message)
			}
			errs = append(errs, fmt.Errorf("%s: %w: %s: %s", c.Name, ErrControllerFailed, res.Status, strings.Join(msgs, "; ")))
		}
	}
	slices.SortFunc(results, func(a, b contract.ControllerResult) int {
		return cmp.Or(cmp.Compare(a.ControllerName, b.ControllerName), cmp.Compare(a.Status, b.Status), cmp.Compare(a.PanicStack, b.PanicStack))
	})

	mutations, err := o.route(run.mutations())
	errs = append(errs, err)
	out := &contract.OutputDir{
		ControllerResults:    &contract.ControllerResults{ControllerResults: results},
		HasControllerResults: true,
		Mutations:            mutations,
	}
	return out, errors.Join(errs...)
}

// outcome is what a controller's goroutine reports.
type outcome struct {
	errs  []error
	panic any
	stack string
}

// runController runs one controller with its own fake client, under the controller timeout,
// recovering panics. Writes made after it returned or timed out are dropped.
func (o *Operator) runController(ctx context.Context, c Controller, env *fakeEnv, run *runLog, events resolvedEventSource, now time.Time) contract.ControllerResult {
	res := contract.ControllerResult{ControllerName: c.Name, Status: contract.ControllerSucceeded}
	w := run.forController(c.Name, env)
	defer w.close()
	cl, err := env.client(w.funcs())
	if err != nil {
		res.Status = contract.ControllerFailed
		res.Errors = []contract.ErrorDetails{{Message: err.Error()}}
		return res
	}
	sink := &eventSink{w: w, src: events, clock: clocktesting.NewFakePassiveClock(now)}
	deps := Deps{
		Client:         cl,
		Recorder:       eventsRecorder{sink},
		LegacyRecorder: legacyRecorder{sink},
		Clock:          clocktesting.NewFakePassiveClock(now),
		Scheme:         env.scheme,
	}
	timeout := cmp.Or(o.ControllerTimeout, DefaultControllerTimeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{panic: p, stack: string(debug.Stack())}
			}
		}()
		r, err := c.New(deps)
		if err != nil {
			done <- outcome{errs: []error{fmt.Errorf("build reconciler: %w", err)}}
			return
		}
		done <- outcome{errs: o.reconcileAll(ctx, r, c.Requests, w)}
	}()

	var out outcome
	select {
	case out = <-done:
	case <-ctx.Done():
		out = outcome{errs: []error{fmt.Errorf("did not finish within %s: %w", timeout, ctx.Err())}}
	}
	switch {
	case out.panic != nil:
		res.Status = contract.ControllerPanicked
		res.Errors = []contract.ErrorDetails{{Message: fmt.Sprint(out.panic)}}
		res.PanicStack = out.stack
	case len(out.errs) > 0:
		res.Status = contract.ControllerFailed
		for _, err := range out.errs {
			res.Errors = append(res.Errors, contract.ErrorDetails{Message: err.Error()})
		}
	}
	return res
}

// reconcileAll reconciles each request until it no longer asks to be requeued, a pass makes
// no write that an earlier pass had not made, or MaxReconciles passes ran.
func (o *Operator) reconcileAll(ctx context.Context, r reconcile.Reconciler, requests []reconcile.Request, w *controllerLog) []error {
	if len(requests) == 0 {
		requests = []reconcile.Request{{}}
	}
	maxPasses := cmp.Or(o.MaxReconciles, DefaultMaxReconciles)
	var errs []error
	for _, req := range requests {
		for pass := 1; ; pass++ {
			before := w.distinctWrites()
			result, err := r.Reconcile(ctx, req)
			if err != nil {
				errs = append(errs, err)
				break
			}
			//nolint:staticcheck // Requeue is deprecated but existing reconcilers still set it.
			if !result.Requeue && result.RequeueAfter <= 0 {
				break
			}
			if w.distinctWrites() == before {
				break // nothing new: another pass would record the same writes
			}
			if pass >= maxPasses {
				errs = append(errs, fmt.Errorf("request %q still asks to be requeued after %d reconciles", req.String(), pass))
				break
			}
			if ctx.Err() != nil {
				break
			}
		}
	}
	return errs
}

// route files each recorded write under every class whose output-resources match it, and
// under Unspecified, with an ErrUndeclared error, when none does. Of two writes that would
// land on the same files, the later wins, as in the contract. The result is sorted as
// contract.ReadOutputDir sorts.
func (o *Operator) route(recorded []contract.Mutation) ([]contract.Mutation, error) {
	var out []contract.Mutation
	var errs []error
	index := map[string]int{}
	for _, m := range recorded {
		classes := o.OutputResources.ClassesOf(m.Identity())
		if len(classes) == 0 {
			classes = []contract.Class{contract.ClassUnspecified}
			by := m.Metadata.ControllerInstanceName
			if by == "" {
				by = "event recorder"
			}
			errs = append(errs, fmt.Errorf("%s %s by %s: %w", m.Metadata.Action, m.Identity(), by, ErrUndeclared))
		}
		for _, c := range classes {
			m.Class = c
			body, _, _ := contract.MutationFiles(&m)
			key := string(c) + "/" + body
			if i, ok := index[key]; ok {
				out[i] = m
				continue
			}
			index[key] = len(out)
			out = append(out, m)
		}
	}
	// The order a reader of the directory sees: by class, then by path.
	slices.SortStableFunc(out, func(a, b contract.Mutation) int {
		pa, _, _ := contract.MutationFiles(&a)
		pb, _, _ := contract.MutationFiles(&b)
		return cmp.Or(cmp.Compare(slices.Index(contract.Classes(), a.Class), slices.Index(contract.Classes(), b.Class)), cmp.Compare(pa, pb))
	})
	return out, errors.Join(errs...)
}

// writeOutputDir writes out into dir, which must be absent, empty, or hold only the logs
// that the upstream harness creates before it runs the operator (stdout.log, stderr.log).
func writeOutputDir(dir string, out *contract.OutputDir, wopts contract.WriteOptions) error {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	logsOnly := len(entries) > 0
	for _, e := range entries {
		if n := e.Name(); (n != "stdout.log" && n != "stderr.log") || !e.Type().IsRegular() {
			logsOnly = false
		}
	}
	if !logsOnly {
		return contract.WriteOutputDir(dir, out, wopts)
	}
	tmp, err := os.MkdirTemp(dir, ".apply-configuration-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	written := filepath.Join(tmp, "out")
	if err := contract.WriteOutputDir(written, out, wopts); err != nil {
		return err
	}
	entries, err = os.ReadDir(written)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.Rename(filepath.Join(written, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
