// Package golden is test support for the files a test keeps its expected output in: the
// golden files under testdata/, and the generated documents and examples checked against
// what the code produces. File compares one file with what a test produced, Dir a whole
// directory; with -update both rewrite the file or directory instead, so that a change of
// output is reviewed as a change of the files.
//
// It defines the one -update flag of the module's test packages: a test package with golden
// files calls File, Dir or Updating; one without imports this package for the flag alone, so
// that "go test ./... -update" is accepted by every package it runs.
//
//	func TestReport(t *testing.T) {
//		golden.File(t, filepath.Join("testdata", "report.txt"), got, "go test ./internal/translate/parity -update")
//	}
//
// It is imported by tests only, never by topolayer's commands or libraries.
package golden
