package harness

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/topolayer/topolayer/contract"
)

// Folders of a test directory.
const (
	InputDirName      = "input-dir"
	ExpectedOutputDir = "expected-output"
)

// ErrNoTests is the error of a discovery that found no test.
var ErrNoTests = errors.New("no test found")

// Test is one test directory: test.yaml, input-dir and expected-output.
type Test struct {
	// Dir is the test directory.
	Dir string
	// Name is Dir relative to the directory the tests were discovered in ("." for itself).
	Name string
	// Description is the parsed test.yaml.
	Description *contract.TestDescription
	// Warnings say what in the test directory topolayer's own readers refuse though the
	// upstream harness accepts it.
	Warnings []string
}

// InputDir returns the test's input directory.
func (t Test) InputDir() string { return filepath.Join(t.Dir, InputDirName) }

// ExpectedDir returns the test's expected output directory.
func (t Test) ExpectedDir() string { return filepath.Join(t.Dir, ExpectedOutputDir) }

// Discover finds the tests under root: every directory that holds a test.yaml, at any depth.
// Each must also hold an input-dir directory and, unless requireExpected is false, an
// expected-output directory, and its test.yaml must be valid as the upstream harness reads it
// (unknown keys are ignored, with a warning). Every problem is reported at
// once and no test is returned then, as the upstream harness aborts before running any.
// Tests are in lexical order of their paths.
func Discover(root string, requireExpected bool) ([]Test, error) {
	return discover(root, requireExpected, false)
}

// discover is Discover; with walkData, it looks for tests inside tests' input-dir and
// expected-output folders too, as upstream does.
func discover(root string, requireExpected, walkData bool) ([]Test, error) {
	var tests []Test
	var errs []error
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if !walkData && path != root && (d.Name() == InputDirName || d.Name() == ExpectedOutputDir) {
			return filepath.SkipDir // a test's own data, not more tests
		}
		data, err := os.ReadFile(filepath.Join(path, contract.TestFile))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		t := Test{Dir: path, Name: filepath.ToSlash(rel)}
		var problems []error
		desc, err := contract.ParseTestDescriptionLenient(data)
		if err != nil {
			problems = append(problems, err)
		} else if _, err := contract.ParseTestDescription(data); err != nil {
			t.Warnings = append(t.Warnings, fmt.Sprintf("%s passes the upstream harness's reader, but topolayer's refuses it: %v", contract.TestFile, err))
		}
		t.Description = desc
		if !isDir(t.InputDir()) {
			problems = append(problems, fmt.Errorf("%s: missing directory", InputDirName))
		}
		if requireExpected && !isDir(t.ExpectedDir()) {
			problems = append(problems, fmt.Errorf("%s: missing directory (run with --update to create it)", ExpectedOutputDir))
		}
		if len(problems) > 0 {
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Join(path, contract.TestFile), errors.Join(problems...)))
			return nil
		}
		tests = append(tests, t)
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(tests) == 0 {
		return nil, fmt.Errorf("%s: %w (a test is a directory with a %s)", root, ErrNoTests, contract.TestFile)
	}
	return tests, nil
}

func isDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}
