package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/topolayer/topolayer/internal/e2e/cluster"
)

// The binaries of topolayer and of the sample operators, built once per test binary.
var binaries struct {
	once sync.Once
	dir  string
	err  error
	took time.Duration
}

// commands are the binaries built, by name, from these packages.
var commands = []string{"./cmd/topolayer", "./cmd/topolayer-devenv", "./cmd/sample-operator", "./cmd/sample-operand", "./cmd/sample-audit-operator", "./examples/hosted-embedding"}

// binary returns the path of a binary of this module (topolayer, topolayer-devenv, sample-operator,
// sample-audit-operator, hosted-embedding), building all of them on the first call.
func binary(t *testing.T, name string) string {
	t.Helper()
	binaries.once.Do(func() {
		root, err := cluster.ModuleRoot()
		if err != nil {
			binaries.err = err
			return
		}
		if binaries.dir, binaries.err = os.MkdirTemp("", "topolayer-e2e-bin-"); binaries.err != nil {
			return
		}
		start := time.Now()
		build := exec.Command("go", append([]string{"build", "-o", binaries.dir + "/"}, commands...)...)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			binaries.err = &buildError{err: err, out: string(out)}
		}
		binaries.took = time.Since(start)
	})
	if binaries.err != nil {
		t.Fatalf("build %v: %v", commands, binaries.err)
	}
	return filepath.Join(binaries.dir, name)
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// removeBinaries removes what binary built (TestMain, after the tests).
func removeBinaries() {
	if binaries.dir != "" {
		_ = os.RemoveAll(binaries.dir)
	}
}
