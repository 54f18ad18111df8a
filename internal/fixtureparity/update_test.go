package fixtureparity_test

// The -update flag is accepted by every test package, so that "go test ./... -update"
// refreshes the golden files of the packages that have them; golden defines it, and this
// package, which has none, imports golden for the flag alone.
import _ "github.com/topolayer/topolayer/internal/golden"
