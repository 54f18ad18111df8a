package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/spf13/cobra"
)

// The exit statuses of every command, documented in the root command's help (and so in
// docs/cli.md).
const (
	// exitOK: the command did what it was asked, and found nothing wrong.
	exitOK = 0
	// exitFailed: the command ran and failed, or found what fails: a rejected entry (plan,
	// parity, translate, apply), an unexplained difference (parity), an entry the live
	// clusters refuse (plan, apply), an invalid configuration (validate), a failed test,
	// an unreadable file or an unreachable cluster.
	exitFailed = 1
	// exitUsage: the command line is wrong (an unknown command or flag, a missing or
	// conflicting flag, an unknown output format); nothing was done.
	exitUsage = 2
)

// exitCodesHelp is the root command's description of the exit statuses.
const exitCodesHelp = `Exit status, the same for every command:
  0        success: nothing wrong was found
  1        the command failed, or found what fails: a rejected entry (plan, parity,
           translate, apply), an unexplained difference (parity), an entry the live clusters
           refuse (plan, apply), an invalid configuration (validate), a failed test
  2        the command line is wrong (unknown command or flag, missing or conflicting flags,
           unknown output format); nothing was done
  128+N    stopped by signal N (130 for SIGINT, 143 for SIGTERM); run exits 0 when a signal
           stops it cleanly`

// usageError is a mistake in the command line: the command did nothing.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usageErrorf formats a usage error.
func usageErrorf(format string, a ...any) error {
	return usageError{fmt.Errorf(format, a...)}
}

// asUsage marks err, when not nil, as a usage error.
func asUsage(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// exitStatus is the exit status of a command that returned err.
func exitStatus(err error) int {
	var u usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &u):
		return exitUsage
	}
	return exitFailed
}

// markUsageErrors makes the errors cobra finds in the command line (flags, arguments) usage
// errors, in every command under root.
func markUsageErrors(root *cobra.Command) {
	root.SetFlagErrorFunc(flagError)
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

// signalStatus is the shell's exit status for a process ended by sig.
func signalStatus(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return exitFailed
}
