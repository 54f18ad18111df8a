package main

import "flag"

// The -update flag is accepted by every test package, so that "go test ./... -update"
// refreshes the golden files of the packages that have them; here it makes TestSampleOperatorTests
// run "topolayer test --update", which rewrites the sample operators' expected outputs.
var _ = flag.Bool("update", false, "rewrite golden files (the sample operators' expected outputs)")
