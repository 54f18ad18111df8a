package manager

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/mom/runner"
)

// controllerErrors are the errors controller-results.yaml reports, one per line.
func controllerErrors(out *contract.OutputDir) []string {
	if out == nil || out.ControllerResults == nil {
		return nil
	}
	var errs []string
	for _, r := range out.ControllerResults.ControllerResults {
		for _, e := range r.Errors {
			errs = append(errs, r.ControllerName+": "+e.Message)
		}
	}
	return errs
}

// networkHint says what a run that failed for lack of network needed, and where to allow
// it.
func networkHint(operator string, needs []string) string {
	return fmt.Sprintf("operator %s needed network to %s; add it to operators[].egress (HOST:PORT) if it should reach it", operator, strings.Join(needs, ", "))
}

// keepForInspection writes the input and output directories of a failed in-process run
// into dir (input/, output/), where a binary's run leaves them, so that run's keepLast keeps
// them as last-failed. Best effort: the run has failed already.
func keepForInspection(dir string, inputs []*contract.InputObject, out *contract.OutputDir) {
	if err := os.RemoveAll(dir); err != nil {
		return
	}
	_ = contract.WriteInputDir(filepath.Join(dir, "input"), inputs)
	if out != nil {
		_ = contract.WriteOutputDir(filepath.Join(dir, "output"), out, contract.WriteOptions{})
	}
}

// exitedNonZero reports whether a run's error is only that the operator process exited
// with a non-zero code: not a signal, a timeout, a cancellation or an output over its limit.
func exitedNonZero(err error) bool {
	var crash *runner.CrashError
	return errors.As(err, &crash) && crash.Signal == "" && crash.ExitCode > 0
}

// partialRun decides whether the outputs of a run that ended with runErr (nil, or a
// non-zero exit) may be applied: the contract writes outputs even when controllers fail,
// so they are applied when they can be read whole and controller-results.yaml says which
// controllers failed (returned, to be reported); otherwise the run fails with runErr.
func partialRun(runErr error, out *contract.OutputDir, readErr error) ([]string, error) {
	if runErr == nil {
		return nil, nil
	}
	failed, ok := failedControllers(out, readErr)
	if !ok {
		return nil, fmt.Errorf("run the operator: %w (its outputs were not applied: %s)", runErr, partialRefusal(out, readErr))
	}
	if len(failed) == 0 {
		failed = []string{"(none reported failed; the operator exited non-zero)"}
	}
	return failed, nil
}

// failedControllers returns the failed and panicked controllers of a run that exited
// non-zero, each with its first error; ok is false when its outputs cannot stand: the
// output directory is unreadable, or controller-results.yaml is missing, null or empty.
func failedControllers(out *contract.OutputDir, readErr error) (failed []string, ok bool) {
	if readErr != nil || out == nil || out.ControllerResults == nil || len(out.ControllerResults.ControllerResults) == 0 {
		return nil, false
	}
	for _, r := range out.ControllerResults.ControllerResults {
		if r.Status != contract.ControllerFailed && r.Status != contract.ControllerPanicked {
			continue
		}
		msg := string(r.Status)
		if len(r.Errors) > 0 {
			msg = r.Errors[0].Message
			if len(r.Errors) > 1 {
				msg += fmt.Sprintf(" (and %d more)", len(r.Errors)-1)
			}
		}
		failed = append(failed, r.ControllerName+": "+msg)
	}
	return failed, true
}

// skippedControllers names the controllers controller-results.yaml says were skipped.
func skippedControllers(out *contract.OutputDir) []string {
	if out == nil || out.ControllerResults == nil {
		return nil
	}
	var skipped []string
	for _, r := range out.ControllerResults.ControllerResults {
		if r.Status == contract.ControllerSkipped {
			skipped = append(skipped, r.ControllerName)
		}
	}
	return skipped
}

// partialRefusal says why the outputs of a run that exited non-zero were not applied.
func partialRefusal(out *contract.OutputDir, readErr error) string {
	switch {
	case readErr != nil:
		return "the output dir cannot be read: " + readErr.Error()
	case out == nil || !out.HasControllerResults || out.ControllerResults == nil:
		return "it wrote no " + contract.ControllerResultsFile
	default:
		return contract.ControllerResultsFile + " names no controller"
	}
}
