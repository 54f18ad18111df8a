// Command peakrss runs a command and prints its peak resident set size, in bytes, and its
// wall time, in nanoseconds, on its last line of standard error: `peakrss topolayer
// translate ...` ends with "peakrss 301699072 1502000000".
//
// Linux gives a process, as its ru_maxrss, the high-water mark of the memory of the process
// that exec'd it as well as its own: a command started by the benchmark harness would report
// the harness's peak (several hundred MiB after it generated and parsed 100,000 mutations)
// when its own is lower. peakrss is a small fresh process between the two, so the peak it
// reports is the command's (or peakrss's own few MiB, whichever is larger).
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: peakrss COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		fmt.Fprintln(os.Stderr, "peakrss:", err)
		os.Exit(2)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "peakrss: no rusage")
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "peakrss %d %d\n", ru.Maxrss*1024, wall.Nanoseconds())
	os.Exit(cmd.ProcessState.ExitCode())
}
