package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

func main() {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	// envtest (installing the CRDs) and client-go log through controller-runtime and klog;
	// without a logger, controller-runtime prints a stack trace asking for one. Every
	// failure is reported by the command itself.
	ctrllog.SetLogger(logr.Discard())
	klog.SetLogger(logr.Discard())
	os.Exit(runMain(IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, os.Args[1:], signals))
}

// IOStreams are the standard streams a command reads and writes; tests pass buffers.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// annotationDaemon marks a command whose normal end is a signal (serve): a clean shutdown
// after one exits 0.
const annotationDaemon = "topolayer.dev/daemon"

// Exit statuses, as topolayer's.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// exitCodesHelp is the root command's description of the exit statuses.
const exitCodesHelp = `Exit status:
  0        success
  1        the command failed
  2        the command line is wrong (unknown command or flag, missing flags); nothing was done
  128+N    stopped by signal N (130 for SIGINT, 143 for SIGTERM); serve exits 0 when a signal
           stops it cleanly`

// runMain runs one command and returns the process's exit status. The first signal cancels
// the command's context and the command is waited for; a second returns at once.
func runMain(streams IOStreams, args []string, signals <-chan os.Signal) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	root := NewRootCommand(streams)
	root.SetArgs(args)
	daemon := false
	if c, _, err := root.Find(args); err == nil && c != nil {
		daemon = c.Annotations[annotationDaemon] == "true"
	}
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	exit := func(err error) int {
		if err == nil {
			return exitOK
		}
		fmt.Fprintln(streams.ErrOut, "error:", err)
		if u := (usageError{}); errors.As(err, &u) {
			fmt.Fprintf(streams.ErrOut, "See '%s --help' for usage.\n", root.CommandPath())
			return exitUsage
		}
		return exitFailed
	}
	var sig os.Signal
	select {
	case err := <-done:
		return exit(err)
	case sig = <-signals:
	}
	cancel(fmt.Errorf("%s", sig))
	select {
	case err := <-done:
		if daemon {
			return exit(err)
		}
		if err != nil {
			fmt.Fprintf(streams.ErrOut, "error: %s: %v\n", sig, err)
		}
	case sig = <-signals:
		fmt.Fprintf(streams.ErrOut, "error: %s again: exiting\n", sig)
	}
	return signalStatus(sig)
}

// signalStatus is the shell's exit status of a process stopped by sig: 128 plus its number.
func signalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exitFailed
}

// options are a command's options in kubectl's pattern: Complete fills what the flags leave
// to compute, Validate checks without side effects, Run does the work.
type options interface {
	Complete() error
	Validate() error
	Run(ctx context.Context) error
}

// runCommand is the RunE of a command whose options follow the pattern.
func runCommand(o options) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if err := o.Complete(); err != nil {
			return err
		}
		if err := o.Validate(); err != nil {
			return usageError{err}
		}
		return o.Run(cmd.Context())
	}
}

// usageError is a mistake in the command line: the command did nothing.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// markUsageErrors makes the errors cobra finds in the command line (flags, arguments) usage
// errors, in every command under root.
func markUsageErrors(root *cobra.Command) {
	asUsage := func(err error) error {
		if err == nil {
			return nil
		}
		return usageError{err}
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return asUsage(err) })
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(cmd *cobra.Command, a []string) error { return asUsage(args(cmd, a)) }
		}
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
}
