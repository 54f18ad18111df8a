package runner

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// TimeoutError reports that a run hit Limits.Timeout. It matches context.DeadlineExceeded
// with errors.Is.
type TimeoutError struct {
	// Operator is the operator's name.
	Operator string
	// Command is the contract command that timed out (apply-configuration, input-resources,
	// output-resources).
	Command string
	// Timeout is the limit that expired.
	Timeout time.Duration
	// Killed is true when the runner killed the operator's process group (Exec).
	Killed bool
	// Abandoned is true when an InProcess function did not return by the timeout: the runner
	// stopped waiting and the goroutine may still be running.
	Abandoned bool
}

// Error implements error.
func (e *TimeoutError) Error() string {
	switch {
	case e.Killed:
		return fmt.Sprintf("operator %q: %s: killed after %s", e.Operator, e.Command, e.Timeout)
	case e.Abandoned:
		return fmt.Sprintf("operator %q: %s: timed out after %s; the function ignored its context and may still be running", e.Operator, e.Command, e.Timeout)
	default:
		return fmt.Sprintf("operator %q: %s: timed out after %s", e.Operator, e.Command, e.Timeout)
	}
}

// Unwrap returns context.DeadlineExceeded.
func (e *TimeoutError) Unwrap() error { return context.DeadlineExceeded }

// CrashError reports that an operator process exited non-zero or was killed by a signal
// other than the runner's timeout.
type CrashError struct {
	// Operator is the operator's name.
	Operator string
	// Command is the contract command that failed.
	Command string
	// ExitCode is the exit code, or -1 when a signal ended the process.
	ExitCode int
	// Signal names the signal that ended the process ("killed", "segmentation fault"), or is
	// empty.
	Signal string
	// Stderr is the tail of the operator's standard error: its last MaxLogTail bytes, after
	// a note of how many were dropped.
	Stderr string
	// MemoryLimit is Limits.Memory when the tail of stderr reads like an allocation failure,
	// so the limit is the likely cause; otherwise 0.
	MemoryLimit int64
	// Err is the underlying error, usually an *exec.ExitError.
	Err error
}

// Error implements error. It quotes the line of stderr that says why the operator ended:
// a Go program's crash header ("panic: ...", "fatal error: ...", "SIGSEGV: ..."), or else
// the last line.
func (e *CrashError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "operator %q: %s: ", e.Operator, e.Command)
	if e.Signal != "" {
		fmt.Fprintf(&b, "killed by signal: %s", e.Signal)
	} else {
		fmt.Fprintf(&b, "exited with code %d", e.ExitCode)
	}
	if e.MemoryLimit > 0 {
		fmt.Fprintf(&b, " (memory limit of %d bytes reached?)", e.MemoryLimit)
	}
	if line := lastWords(e.Stderr); line != "" {
		fmt.Fprintf(&b, ": %s", line)
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *CrashError) Unwrap() error { return e.Err }

// PanicError reports that an InProcess function panicked. The runner recovered it; other
// operators are unaffected.
type PanicError struct {
	// Operator is the operator's name.
	Operator string
	// Value is what the function panicked with.
	Value any
	// Stack is the panicking goroutine's stack.
	Stack string
}

// Error implements error.
func (e *PanicError) Error() string {
	return fmt.Sprintf("operator %q: panic: %v", e.Operator, e.Value)
}

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}

// OutputTooLargeError reports that an output directory exceeded Limits.OutputSize. The
// runner removed the directory.
type OutputTooLargeError struct {
	// Operator is the operator's name.
	Operator string
	// Dir is the output directory that was removed.
	Dir string
	// Size is the size measured, in bytes; it is a lower bound when the runner stopped the
	// operator while it was still writing.
	Size int64
	// Limit is Limits.OutputSize.
	Limit int64
	// RemoveErr is set when removing the directory failed.
	RemoveErr error
}

// Error implements error.
func (e *OutputTooLargeError) Error() string {
	msg := fmt.Sprintf("operator %q: output dir %s: %d bytes is over the limit of %d bytes", e.Operator, e.Dir, e.Size, e.Limit)
	if e.RemoveErr != nil {
		return msg + "; removing it failed: " + e.RemoveErr.Error()
	}
	return msg + "; removed"
}

// Unwrap returns the error of removing the directory, if any.
func (e *OutputTooLargeError) Unwrap() error { return e.RemoveErr }

// lastLine returns the last non-empty line of s, shortened to 512 bytes.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n\r\t ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	s = strings.TrimSpace(s)
	if len(s) > 512 {
		s = s[:512] + "…"
	}
	return s
}

// lastWords returns the line of an operator's stderr that says why it ended. A Go program
// that crashes ends its stderr with goroutine stacks and, for a fault, a register dump
// ("gs 0x0"); the header before them says what happened. Other programs' last line does.
func lastWords(stderr string) string {
	if i := goCrashHeader(stderr); i >= 0 {
		return lastLine(firstLine(stderr[i:]))
	}
	return lastLine(stderr)
}

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// goCrashHeader returns the offset of the last line of stderr that begins a Go runtime
// crash report: a panic, a fatal error, or a fault the runtime could not turn into a panic
// ("SIGSEGV: segmentation violation" followed by "PC=..."), or -1.
func goCrashHeader(stderr string) int {
	at := -1
	for off := 0; off < len(stderr); {
		line := firstLine(stderr[off:])
		next := min(off+len(line)+1, len(stderr))
		if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") || isRuntimeFault(line, firstLine(stderr[next:])) {
			at = off
		}
		off = next
	}
	return at
}

// isRuntimeFault reports whether line is the header the Go runtime prints for a signal it
// cannot turn into a panic ("SIGSEGV: segmentation violation"), next being the line after
// it ("PC=... addr=...").
func isRuntimeFault(line, next string) bool {
	name, _, ok := strings.Cut(line, ": ")
	return ok && strings.HasPrefix(name, "SIG") && strings.HasPrefix(next, "PC=")
}

// looksLikeOOM reports whether an operator's stderr reads like an allocation failure: Go's
// "fatal error: runtime: out of memory", C's ENOMEM, C++'s and Python's errors, or a Go
// runtime fault at address zero. The last is how a Go 1.26 program can end at an
// address-space limit: its garbage collector does not check every allocation it makes for
// itself (the span queues of runtime/mgcmark_greenteagc.go), and faults on the nil one.
func looksLikeOOM(stderr string) bool {
	for _, s := range []string{"out of memory", "cannot allocate memory", "std::bad_alloc", "MemoryError", "failed to reserve"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	i := goCrashHeader(stderr)
	if i < 0 {
		return false
	}
	header, rest, _ := strings.Cut(stderr[i:], "\n")
	next := firstLine(rest)
	return isRuntimeFault(header, next) && strings.Contains(next, " addr=0x0")
}
