// Command hang starts a child process that sleeps, reports both pids on stderr as
// "parent=P child=C", and then sleeps itself, or, with HANG_EXIT=1, exits at once and leaves
// the child behind.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"time"
)

func main() {
	if os.Getenv("HANG_CHILD") == "1" {
		time.Sleep(time.Hour)
		return
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	child := exec.Command(self, "child")
	child.Env = append(os.Environ(), "HANG_CHILD=1")
	if err := child.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "parent=%d child=%d\n", os.Getpid(), child.Process.Pid)
	if os.Getenv("HANG_EXIT") == "1" {
		return
	}
	time.Sleep(time.Hour)
}
