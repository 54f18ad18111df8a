// Package cli is what the command lines of topolayer and topolayer-devenv share: the streams
// a command uses, kubectl's options pattern (Complete, Validate, Run), usage errors and the
// exit statuses they lead to.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/spf13/cobra"
)

// IOStreams are the standard streams a command reads and writes; tests pass buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Root makes cmd a binary's root command, reading and writing streams. Cobra prints neither
// errors nor usage: the main reports the error with Exit.
func Root(cmd *cobra.Command, streams IOStreams) *cobra.Command {
	cmd.SilenceUsage = true
	cmd.SilenceErrors = true
	cmd.SetIn(streams.In)
	cmd.SetOut(streams.Out)
	cmd.SetErr(streams.ErrOut)
	return cmd
}

// The exit statuses of every command; each binary's root help says what they mean for it.
const (
	// ExitOK: the command did what it was asked, and found nothing wrong.
	ExitOK = 0
	// ExitFailed: the command ran and failed, or found what fails.
	ExitFailed = 1
	// ExitUsage: the command line is wrong (a UsageError); nothing was done.
	ExitUsage = 2
)

// usageError is a mistake in the command line: the command did nothing.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// UsageErrorf formats a usage error: one that makes the command exit with ExitUsage.
func UsageErrorf(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}

// AsUsage marks err, when not nil, as a usage error.
func AsUsage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// ExitStatus is the exit status of a command that returned err.
func ExitStatus(err error) int {
	var u usageError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &u):
		return ExitUsage
	}
	return ExitFailed
}

// SignalStatus is the shell's exit status of a process stopped by sig: 128 plus its number.
func SignalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return ExitFailed
}

// MarkUsageErrors makes the errors cobra finds in the command line (flags, arguments) usage
// errors, in every command under root. A flag's error goes through flagError, which must
// return a usage error; nil is AsUsage.
func MarkUsageErrors(root *cobra.Command, flagError func(*cobra.Command, error) error) {
	if flagError == nil {
		flagError = func(_ *cobra.Command, err error) error { return AsUsage(err) }
	}
	root.SetFlagErrorFunc(flagError)
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(cmd *cobra.Command, a []string) error { return AsUsage(args(cmd, a)) }
		}
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
}

// Options are a command's options in kubectl's pattern: Validate checks without side
// effects, Run does the work; a Completer's Complete first fills what the flags leave to
// compute.
type Options interface {
	Validate() error
	Run(ctx context.Context) error
}

// Completer is Options with a Complete step.
type Completer interface {
	Complete() error
}

// RunCommand is the RunE of a command whose options follow the pattern: an error of Validate
// is a usage error.
func RunCommand(o Options) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if c, ok := o.(Completer); ok {
			if err := c.Complete(); err != nil {
				return err
			}
		}
		if err := o.Validate(); err != nil {
			return AsUsage(err)
		}
		return o.Run(cmd.Context())
	}
}

// AnnotationDaemon marks a command whose normal end is a signal (topolayer run,
// topolayer-devenv serve): it shuts down gracefully, taking the time it needs, and a clean
// shutdown exits 0.
const AnnotationDaemon = "topolayer.dev/daemon"

// Execution is a command line running in the background, as a main runs it: the main waits
// for Done or a signal, whichever comes first.
type Execution struct {
	// Daemon is whether the command args call is annotated AnnotationDaemon.
	Daemon bool
	// Done receives the command's error when it returns.
	Done <-chan error
	// Stop cancels the command's context with a cause; call it once the command is done.
	Stop context.CancelCauseFunc
}

// Start runs root with args in the background, under a context of its own.
func Start(root *cobra.Command, args []string) Execution {
	ctx, cancel := context.WithCancelCause(context.Background())
	root.SetArgs(args)
	daemon := false
	if c, _, err := root.Find(args); err == nil && c != nil {
		daemon = c.Annotations[AnnotationDaemon] == "true"
	}
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	return Execution{Daemon: daemon, Done: done, Stop: cancel}
}

// FirstSignal waits for the command to return or for a signal, whichever comes first. When
// the command returned, it returns the command's error and no signal; else the signal, once
// it canceled the command's context with the signal as the cause.
func (x Execution) FirstSignal(signals <-chan os.Signal) (os.Signal, error) {
	select {
	case err := <-x.Done:
		return nil, err
	case sig := <-signals:
		x.Stop(fmt.Errorf("%s", sig))
		return sig, nil
	}
}

// Exit reports err, when not nil, on w ("error: ..."; a usage error also names the help of
// the command at path) and returns the exit status of a command that returned it.
func Exit(w io.Writer, path string, err error) int {
	if err != nil {
		fmt.Fprintln(w, "error:", err)
	}
	if ExitStatus(err) == ExitUsage {
		fmt.Fprintf(w, "See '%s --help' for usage.\n", path)
	}
	return ExitStatus(err)
}
