//go:build !linux

package runner

import (
	"context"
	"fmt"
	"os"
)

// runProcess is not available: the sandbox needs Linux (process groups, namespaces,
// rlimits of another process).
func (e *Exec) runProcess(_ context.Context, p process) (outcome, error) {
	return outcome{}, fmt.Errorf("operator %q: the Exec runner needs linux", p.op)
}

// signalName is never called off Linux.
func signalName(*os.ProcessState) string { return "" }
