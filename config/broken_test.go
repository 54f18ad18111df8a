package config_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/config"
)

// brokenCase is one file of testdata/broken: a configuration with one breakage, and what its
// error must say, from the file's leading comments "# field: ..." and "# reason: ...".
type brokenCase struct {
	file, field, reason string
}

// brokenCases reads testdata/broken.
func brokenCases(t *testing.T) []brokenCase {
	t.Helper()
	files, err := filepath.Glob("testdata/broken/*.yaml")
	if err != nil || len(files) < 20 {
		t.Fatalf("testdata/broken: %d files, want at least 20 (%v)", len(files), err)
	}
	var out []brokenCase
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := brokenCase{file: f}
		for s := bufio.NewScanner(bytes.NewReader(data)); s.Scan(); {
			if v, ok := strings.CutPrefix(s.Text(), "# field: "); ok {
				c.field = v
			} else if v, ok := strings.CutPrefix(s.Text(), "# reason: "); ok {
				c.reason = v
			}
		}
		if c.field == "" || c.reason == "" {
			t.Fatalf("%s: no '# field:' or '# reason:' comment", f)
		}
		out = append(out, c)
	}
	return out
}

// TestBrokenConfigFiles: every file of testdata/broken is refused, and the error names the
// file, the field path and the reason. cmd/topolayer runs validate and run on the same files.
func TestBrokenConfigFiles(t *testing.T) {
	for _, c := range brokenCases(t) {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			_, err := config.Load(c.file)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, want := range []string{c.file + ": ", c.field, c.reason} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not say %q:\n%v", want, err)
				}
			}
		})
	}
}
