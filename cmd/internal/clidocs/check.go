package clidocs

import (
	"bytes"
	"testing"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/internal/golden"
)

// Check fails t unless the golden file at path is the reference Write writes for root; with
// -update it rewrites the file. regenerate is the command that does so (`go generate
// ./cmd/topolayer`), written into the file and named when it differs.
func Check(t testing.TB, path, title, regenerate string, root *cobra.Command) {
	t.Helper()
	var got bytes.Buffer
	if err := Write(&got, title, regenerate, root); err != nil {
		t.Fatal(err)
	}
	golden.File(t, path, got.Bytes(), regenerate)
}
