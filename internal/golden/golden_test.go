package golden_test

import (
	"path/filepath"
	"testing"

	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/golden"
)

// TestUnchanged: what equals its golden file or directory passes, without -update.
func TestUnchanged(t *testing.T) {
	if golden.Updating() {
		t.Skip("with -update there is nothing to compare")
	}
	tests := map[string]map[string]string{
		"one file":            {"report.txt": "a\n"},
		"a tree":              {"plan.json": "{}\n", "translated/a.yaml": "kind: A\n"},
		"an empty file":       {"empty": ""},
		"a file in a new dir": {"x/y/z.md": "# z\n"},
	}
	for name, files := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			contracttest.WriteFiles(t, dir, files)
			for p, content := range files {
				path := filepath.Join(dir, filepath.FromSlash(p))
				golden.File(t, path, []byte(content), "go test ./internal/golden -update")
			}
			golden.Dir(t, dir, dir, "go test ./internal/golden -update")
		})
	}
}
