package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// operators are the test operator programs of testdata/operators, built once by TestMain.
var operators = []string{"good", "dialer", "hang", "crash", "bigoutput", "envdump", "memhog"}

// binDir holds the built operators.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	dir, err := os.MkdirTemp("", "runner-operators-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, op := range operators {
		args = append(args, "./testdata/operators/"+op)
	}
	build := exec.Command("go", args...)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build test operators:", err)
		return 1
	}
	return m.Run()
}

// operatorBin returns the path of a built test operator.
func operatorBin(name string) string { return filepath.Join(binDir, name) }
