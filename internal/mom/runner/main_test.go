package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/topolayer/topolayer/internal/contracttest"
)

// operators are the test operator programs of testdata/operators, built once by TestMain.
var operators = []string{"good", "dialer", "hang", "crash", "bigoutput", "envdump", "memhog"}

// binDir holds the built operators.
var binDir string

func TestMain(m *testing.M) {
	// Exec.Egress starts this binary again as the sandbox's init.
	if len(os.Args) > 1 && os.Args[1] == InitArg {
		os.Exit(RunInit(os.Args[2:]))
	}
	pkgs := make([]string, len(operators))
	for i, op := range operators {
		pkgs[i] = "./testdata/operators/" + op
	}
	os.Exit(contracttest.RunWithOperators(m, &binDir, "runner-operators-", pkgs...))
}

// operatorBin returns the path of a built test operator.
func operatorBin(name string) string { return filepath.Join(binDir, name) }
