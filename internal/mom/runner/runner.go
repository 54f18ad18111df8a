package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/topolayer/topolayer/contract"
)

// Runner runs one operator: it reports the operator's declarations and runs its
// apply-configuration once. Implementations are safe for concurrent use.
type Runner interface {
	// Resources asks the operator what it reads and may write (input-resources /
	// output-resources commands).
	Resources(ctx context.Context) (*contract.InputResources, *contract.OutputResources, error)
	// Run runs apply-configuration once. It returns a Result whenever the operator was
	// started, also together with an error.
	Run(ctx context.Context, req Request) (*Result, error)
}

// Request is one apply-configuration run.
type Request struct {
	// Operator names the operator in results, errors and logs; empty means the runner's Name.
	Operator string
	// InputDir is the must-gather-like input directory the operator reads.
	InputDir string
	// OutputDir is where the operator writes its mutations. It must be empty or absent; the
	// runner creates it.
	OutputDir string
	// Now is passed as --now=RFC3339 when non-zero.
	Now time.Time
	// Controllers is passed as --controllers=a,b when non-empty.
	Controllers []string
	// Env adds to the runner's Env for this run: values read from the operator's inputs (the
	// cluster Proxy's, config.Operator.EnvFromInputs). The runner's denied variables are
	// denied here too. Where the sandbox has no network namespace, its refusing proxy
	// variables replace HTTP_PROXY, HTTPS_PROXY and NO_PROXY set here (the log says so).
	// InProcess and InMemory have no environment of their own and refuse a non-empty Env.
	Env map[string]string
}

// Result describes one run.
type Result struct {
	// Operator is the operator's name.
	Operator string
	// Duration is the wall time from start to exit (or to the timeout).
	Duration time.Duration
	// ExitCode is the process's exit code: 0 on success, -1 when it was killed by a signal
	// (including the runner's own kill at a limit). InProcess: 0, or 1 when the function
	// failed, panicked or timed out.
	ExitCode int
	// Stdout is the last MaxLogTail bytes of the operator's standard output.
	Stdout string
	// Stderr is the last MaxLogTail bytes of the operator's standard error.
	Stderr string
	// OutputBytes is the total size of the regular files in the output directory when the
	// run ended (0 when the directory was removed for being too large).
	OutputBytes int64
	// Sandbox says how the operator was isolated from the network: "netns", "proxy-env (no
	// network namespace: <reason>)", or "in-process" (no isolation).
	Sandbox string
}

// Limits bound one run. The zero value of each field means "no limit".
type Limits struct {
	// Timeout bounds the wall time of one command. Exec kills the operator's whole process
	// group when it expires; InProcess stops waiting for the function.
	Timeout time.Duration
	// Memory bounds the virtual address space (RLIMIT_AS) of an Exec operator, in bytes.
	// It is not a bound on resident memory: a Go binary needs about 700 MiB of address space
	// before main runs (1.2 GiB where the limit is applied after the start, see Exec), so
	// give Go operators at least 1 GiB plus their heap. Exceeding it usually crashes the
	// operator (*CrashError with MemoryLimit set). InProcess ignores it (Go cannot bound
	// one goroutine's memory).
	Memory int64
	// OutputSize bounds the total size of the regular files in the output directory, in
	// bytes. A larger output directory is removed and reported as *OutputTooLargeError.
	OutputSize int64
}

// MaxLogTail is how much of an operator's stdout and stderr is kept: the last 64 KiB.
const MaxLogTail = 64 << 10

// operatorName picks the name used in results and errors.
func operatorName(req Request, name string) string {
	if req.Operator != "" {
		return req.Operator
	}
	if name != "" {
		return name
	}
	return "unnamed"
}

// noEnv refuses a request with an environment for a runner that runs in this process.
func noEnv(op string, req Request) error {
	if len(req.Env) > 0 {
		return fmt.Errorf("operator %q: env %v: an operator run in process has no environment of its own", op, slices.Sorted(maps.Keys(req.Env)))
	}
	return nil
}

// prepareDirs checks a request and creates its output directory. It returns the absolute
// input and output directories.
func prepareDirs(op string, req Request) (in, out string, err error) {
	if req.InputDir == "" {
		return "", "", fmt.Errorf("operator %q: input dir is required", op)
	}
	if req.OutputDir == "" {
		return "", "", fmt.Errorf("operator %q: output dir is required", op)
	}
	if in, err = filepath.Abs(req.InputDir); err != nil {
		return "", "", fmt.Errorf("operator %q: input dir: %w", op, err)
	}
	if out, err = filepath.Abs(req.OutputDir); err != nil {
		return "", "", fmt.Errorf("operator %q: output dir: %w", op, err)
	}
	if fi, err := os.Stat(in); err != nil {
		return "", "", fmt.Errorf("operator %q: input dir: %w", op, err)
	} else if !fi.IsDir() {
		return "", "", fmt.Errorf("operator %q: input dir %s: not a directory", op, in)
	}
	entries, err := os.ReadDir(out)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(out, 0o755); err != nil {
			return "", "", fmt.Errorf("operator %q: create output dir: %w", op, err)
		}
	case err != nil:
		return "", "", fmt.Errorf("operator %q: output dir: %w", op, err)
	case len(entries) > 0:
		return "", "", fmt.Errorf("operator %q: output dir %s: not empty", op, out)
	}
	return in, out, nil
}

// dirSize is the total size of the regular files under dir. Symbolic links are not followed
// and count nothing; entries that vanish during the walk are skipped.
func dirSize(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		total += fi.Size()
		return nil
	})
	return total, err
}

// checkOutputSize measures the output directory after a run and removes it when it is over
// the limit (0: no limit).
func checkOutputSize(op, dir string, limit int64) (int64, error) {
	size, err := dirSize(dir)
	if err != nil {
		return size, fmt.Errorf("operator %q: measure output dir: %w", op, err)
	}
	if limit > 0 && size > limit {
		return 0, tooLarge(op, dir, size, limit)
	}
	return size, nil
}

// tooLarge removes an oversized output directory and builds the error.
func tooLarge(op, dir string, size, limit int64) error {
	e := &OutputTooLargeError{Operator: op, Dir: dir, Size: size, Limit: limit}
	if err := os.RemoveAll(dir); err != nil {
		e.RemoveErr = err
	}
	return e
}
