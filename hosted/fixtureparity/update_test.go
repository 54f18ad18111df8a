package fixtureparity_test

import "flag"

// The -update flag is accepted by every test package, so that "go test ./... -update"
// refreshes the golden files of the packages that have them.
var _ = flag.Bool("update", false, "rewrite golden files (none in this package)")
