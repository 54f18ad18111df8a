package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"time"

	"github.com/spf13/cobra"
)

// Runner runs one operator command line: argv[0] is the program and argv[1:] its
// arguments; stdout and stderr receive its output. It returns nil when the operator exited
// zero, an error with an ExitCode() int method (such as *exec.ExitError or *ExitError) when
// it ran and exited non-zero, and any other error when it could not run. A sandboxed runner
// can replace Exec by following these rules.
type Runner func(ctx context.Context, argv []string, stdout, stderr io.Writer) error

var (
	_ Runner = Exec
	_ Runner = CommandRunner(nil)
)

// Exec runs argv as a child process, killed when ctx ends. argv[0] is looked up as exec.Command
// does: a name with a slash is relative to the working directory, a bare name is searched
// in PATH. The child inherits the harness's environment, as upstream's does (operators built
// on library-go need $HOME, for one).
func Exec(ctx context.Context, argv []string, stdout, stderr io.Writer) error {
	if len(argv) == 0 {
		return errors.New("no command to run")
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second // do not wait for grandchildren holding the pipes
	return cmd.Run()
}

// ExitError is the error of a run that exited non-zero, for runners that do not start a
// process.
type ExitError struct {
	// Code is the exit status.
	Code int
	// Err is why, when known.
	Err error
}

// Error implements error.
func (e *ExitError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("exit status %d: %v", e.Code, e.Err)
	}
	return fmt.Sprintf("exit status %d", e.Code)
}

// Unwrap returns the cause.
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode returns the exit status.
func (e *ExitError) ExitCode() int { return e.Code }

// CommandRunner runs an operator's command line in process, for operators built with
// sdk (pass op.Command): argv[0] is ignored, argv[1:] are the command's arguments,
// and an error of the command counts as exit status 1.
func CommandRunner(newCommand func() *cobra.Command) Runner {
	return func(ctx context.Context, argv []string, stdout, stderr io.Writer) error {
		if newCommand == nil {
			return errors.New("no command")
		}
		cmd := newCommand()
		cmd.SetArgs(argv[min(1, len(argv)):])
		cmd.SetOut(stdout)
		cmd.SetErr(stderr)
		if err := cmd.ExecuteContext(ctx); err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return &ExitError{Code: 1, Err: err}
		}
		return nil
	}
}

// exitCode returns the exit status of a runner's error and whether it is one.
func exitCode(err error) (int, bool) {
	var e interface{ ExitCode() int }
	if errors.As(err, &e) {
		return e.ExitCode(), true
	}
	return 0, false
}
