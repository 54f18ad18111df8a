// Command crash fails every contract command. It writes STDERR_BYTES bytes of filler to
// stderr, then "the last words", then exits with code 3, or with CRASH_MODE=signal kills
// itself with SIGKILL.
package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

func main() {
	if n, _ := strconv.Atoi(os.Getenv("STDERR_BYTES")); n > 0 {
		line := append(bytes.Repeat([]byte("x"), 99), '\n')
		for ; n > 0; n -= len(line) {
			os.Stderr.Write(line)
		}
	}
	fmt.Fprintln(os.Stderr, "the last words")
	if os.Getenv("CRASH_MODE") == "signal" {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	os.Exit(3)
}
