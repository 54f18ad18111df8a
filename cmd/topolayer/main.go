package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/internal/mom/runner"
)

// stopGrace is how long a command may take to return once a signal canceled its context.
const stopGrace = time.Second

func main() {
	// An operator allowed egress (operators[].egress) starts under this binary as its
	// sandbox's init, which then becomes the operator.
	if len(os.Args) > 1 && os.Args[1] == runner.InitArg {
		os.Exit(runner.RunInit(os.Args[2:]))
	}
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	os.Exit(runMain(IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, os.Args[1:], signals, stopGrace))
}

// runMain runs one command and returns the process's exit status (cli.ExitStatus: 0, 1 when it
// failed, 2 for a usage error), or 128 plus
// the signal's number (130 for SIGINT, 143 for SIGTERM) when a signal came: the first cancels
// the command's context, and the status is returned when the command returns or grace later,
// whichever is first; a second signal returns it at once. A daemon (cli.AnnotationDaemon) is
// waited for without a limit after the first signal, and exits 0 when it stopped cleanly.
func runMain(streams IOStreams, args []string, signals <-chan os.Signal, grace time.Duration) int {
	root := NewRootCommand(streams)
	x := cli.Start(root, args)
	defer x.Stop(nil)
	exit := func(err error) int { return cli.Exit(streams.ErrOut, commandPath(root, args), err) }
	sig, err := x.FirstSignal(signals)
	if sig == nil {
		return exit(err)
	}
	status := cli.SignalStatus(sig)
	if x.Daemon {
		select {
		case err := <-x.Done:
			return exit(err)
		case sig = <-signals:
			fmt.Fprintf(streams.ErrOut, "error: %s again: exiting before the shutdown finished\n", sig)
			return cli.SignalStatus(sig)
		}
	}
	select {
	case err := <-x.Done:
		reportInterrupted(streams.ErrOut, sig, err)
	case <-time.After(grace):
		fmt.Fprintf(streams.ErrOut, "error: %s: the command did not stop within %s; exiting\n", sig, grace)
	case sig = <-signals:
		fmt.Fprintf(streams.ErrOut, "error: %s again: exiting\n", sig)
		status = cli.SignalStatus(sig)
	}
	return status
}

// reportInterrupted says why a command that returned after a signal exits non-zero.
func reportInterrupted(w io.Writer, sig os.Signal, err error) {
	if err != nil {
		fmt.Fprintf(w, "error: %s: %v\n", sig, err)
		return
	}
	fmt.Fprintf(w, "error: %s: interrupted\n", sig)
}

// commandPath names the command args call, or the root when they call none.
func commandPath(root *cobra.Command, args []string) string {
	if c, _, err := root.Find(args); err == nil && c != nil {
		return c.CommandPath()
	}
	return root.CommandPath()
}
