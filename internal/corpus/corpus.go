package corpus

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/topolayer/topolayer/contract"
)

// EnvVar names the environment variable that points at the corpus directory.
const EnvVar = "TOPOLAYER_CORPUS"

// Operator folders of the corpus.
const (
	CAO = "cluster-authentication-operator"
	MOM = "multi-operator-manager"
)

// Case is one apply-configuration test case of the corpus.
type Case struct {
	// Name is "<operator>/<case>", e.g. "cluster-authentication-operator/minimal-cluster".
	Name string
	// Operator is CAO or MOM.
	Operator string
	// Dir holds test.yaml, input-dir and expected-output.
	Dir string
	// InputDir and ExpectedOutput are the case's input and output directories.
	InputDir, ExpectedOutput string
	// OutputResources is the operator's output-resources document, "" when the corpus has none.
	OutputResources string
	// InputResources is the operator's input-resources document, "" when the corpus has none.
	InputResources string
	// NameKey is the spelling of the metadata name key in this case's files.
	NameKey contract.NameKey
}

// Dir returns the corpus directory, or skips the test when TOPOLAYER_CORPUS is unset.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv(EnvVar)
	if dir == "" {
		tb.Skipf("%s is not set: skipping the test over the shared corpus of real operator outputs (make test sets it to ../shared/corpus)", EnvVar)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		tb.Fatalf("%s=%s is not a directory: %v", EnvVar, dir, err)
	}
	return dir
}

// Cases returns every apply-configuration case of the corpus, sorted by name: the
// cluster-authentication-operator's (metadata key `name`) and multi-operator-manager's
// (legacy key `mame`).
func Cases(tb testing.TB) []Case {
	tb.Helper()
	root := Dir(tb)
	var cases []Case
	add := func(op, pattern string, key contract.NameKey, outputResources, inputResources string) {
		dirs, err := filepath.Glob(filepath.Join(root, op, pattern))
		if err != nil {
			tb.Fatal(err)
		}
		for _, d := range dirs {
			cases = append(cases, Case{
				Name:            op + "/" + filepath.Base(d),
				Operator:        op,
				Dir:             d,
				InputDir:        filepath.Join(d, "input-dir"),
				ExpectedOutput:  filepath.Join(d, "expected-output"),
				OutputResources: outputResources,
				InputResources:  inputResources,
				NameKey:         key,
			})
		}
	}
	gen := filepath.Join(root, CAO, "_generated")
	add(CAO, "test-data/apply-configuration/overall/*", contract.NameKeyName,
		filepath.Join(gen, "output-resources.yaml"), filepath.Join(gen, "input-resources.yaml"))
	add(MOM, "test-data/apply-configuration/*", contract.NameKeyLegacy, "", "")
	if len(cases) == 0 {
		tb.Fatalf("%s=%s holds no apply-configuration cases", EnvVar, root)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	return cases
}

// CAOCases returns only the cluster-authentication-operator's cases.
func CAOCases(tb testing.TB) []Case {
	tb.Helper()
	var out []Case
	for _, c := range Cases(tb) {
		if c.Operator == CAO {
			out = append(out, c)
		}
	}
	return out
}

// Path joins elements onto the corpus directory.
func Path(tb testing.TB, elem ...string) string {
	tb.Helper()
	return filepath.Join(append([]string{Dir(tb)}, elem...)...)
}
