package corpus

import (
	"path/filepath"
	"testing"
)

// PruneCase is one test case of the upstream must-gather pruner
// (multi-operator-manager's pkg/library/libraryinputresources/test-data).
type PruneCase struct {
	// Name is the case's folder name, e.g. "direct-references-01".
	Name string
	// InputResources is the case's input-resources.yaml.
	InputResources string
	// MustGather is the directory the pruner reads (input-dir).
	MustGather string
	// ExpectedOutput is the directory it is expected to write.
	ExpectedOutput string
}

// PruneCases returns the pruner's test cases, sorted by name; it skips tb when
// TOPOLAYER_CORPUS is unset and fails it when the corpus holds none.
func PruneCases(tb testing.TB) []PruneCase {
	tb.Helper()
	dirs, err := filepath.Glob(Path(tb, MOM, "pkg", "library", "libraryinputresources", "test-data", "*", "input-resources.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(dirs) == 0 {
		tb.Fatalf("%s=%s holds no pruner test cases", EnvVar, Dir(tb))
	}
	var cases []PruneCase
	for _, f := range dirs { // Glob sorts
		d := filepath.Dir(f)
		cases = append(cases, PruneCase{
			Name:           filepath.Base(d),
			InputResources: f,
			MustGather:     filepath.Join(d, "input-dir"),
			ExpectedOutput: filepath.Join(d, "expected-output"),
		})
	}
	return cases
}
