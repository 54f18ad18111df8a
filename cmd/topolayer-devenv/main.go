package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/topolayer/topolayer/cmd/internal/cli"
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
type IOStreams = cli.IOStreams

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
	root := NewRootCommand(streams)
	x := cli.Start(root, args)
	defer x.Stop(nil)
	exit := func(err error) int { return cli.Exit(streams.ErrOut, root.CommandPath(), err) }
	sig, err := x.FirstSignal(signals)
	if sig == nil {
		return exit(err)
	}
	select {
	case err := <-x.Done:
		if x.Daemon {
			return exit(err)
		}
		if err != nil {
			fmt.Fprintf(streams.ErrOut, "error: %s: %v\n", sig, err)
		}
	case sig = <-signals:
		fmt.Fprintf(streams.ErrOut, "error: %s again: exiting\n", sig)
	}
	return cli.SignalStatus(sig)
}
