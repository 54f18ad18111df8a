// Package contracttest builds contract directories for tests: a small valid output
// directory, and a table of malformed ones, each with the file its error must name. Tests of
// every package that reads operator outputs (the reader itself, the command line) run the
// same table, so "bad input never crashes and never half-applies" is checked end to end.
//
//	dir := contracttest.WriteValidOutputDir(t, t.TempDir())
//	for _, c := range contracttest.MalformedOutputDirs(t) { _, err := contract.ReadOutputDir(c.Dir, ...) }
package contracttest
