package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/topolayer/topolayer/contract/contracttest"
)

// operators are the test operator programs of testdata/operators, built once by TestMain.
var operators = []string{"good", "dialer", "hang", "crash", "bigoutput", "envdump", "memhog"}

// binDir holds the built operators.
var binDir string

func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	pkgs := make([]string, len(operators))
	for i, op := range operators {
		pkgs[i] = "./testdata/operators/" + op
	}
	dir, err := contracttest.BuildOperators("runner-operators-", pkgs...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "build test operators:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	return m.Run()
}

// operatorBin returns the path of a built test operator.
func operatorBin(name string) string { return filepath.Join(binDir, name) }
