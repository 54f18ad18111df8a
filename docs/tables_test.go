package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/internal/golden"
)

// generatedTable is a table of a document written from data, between a start comment and
// an end comment.
type generatedTable struct {
	file, start, end string
	render           func(t *testing.T, root string) string
}

var generatedTables = []generatedTable{{
	file:   "docs/README.md",
	start:  "<!-- parity table: generated from internal/translate/parity/testdata/corpus/*.md by `go test ./docs -update`. Do not edit. -->\n",
	end:    "<!-- end parity table -->",
	render: parityTable,
}}

// parityTable is the count line of each corpus case's parity report (the report the
// translate/parity golden test keeps equal to `topolayer parity`'s), one row a case.
func parityTable(t *testing.T, root string) string {
	reports, err := filepath.Glob(filepath.Join(root, "internal", "translate", "parity", "testdata", "corpus", "*.md"))
	if err != nil || len(reports) == 0 {
		t.Fatalf("no parity reports under internal/translate/parity/testdata/corpus: %v", err)
	}
	count := regexp.MustCompile(`(?m)^\*\*(\d+ objects: [^*]+)\*\*$`)
	var b strings.Builder
	b.WriteString("| case | parity |\n|---|---|\n")
	for _, r := range reports {
		data, err := os.ReadFile(r)
		if err != nil {
			t.Fatal(err)
		}
		m := count.FindSubmatch(data)
		if m == nil {
			t.Fatalf("%s: no count line (**N objects: ...**)", r)
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", strings.TrimSuffix(filepath.Base(r), ".md"), m[1])
	}
	return b.String()
}

// TestGeneratedTables checks that each generated table of the documents is what its data
// gives; with -update, it rewrites them.
func TestGeneratedTables(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range generatedTables {
		path := filepath.Join(root, filepath.FromSlash(g.file))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		i := strings.Index(text, g.start)
		j := strings.Index(text, g.end)
		if i < 0 || j < i {
			t.Fatalf("%s: no generated table between %q and %q", g.file, g.start, g.end)
		}
		want := g.render(t, root)
		got := text[i+len(g.start) : j]
		if got == want {
			continue
		}
		if golden.Updating() {
			if err := os.WriteFile(path, []byte(text[:i+len(g.start)]+want+text[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s: the generated table is stale (go test ./docs -update rewrites it):\n-- has --\n%s-- want --\n%s", g.file, got, want)
	}
}
