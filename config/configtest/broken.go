// Package configtest serves the tests of the packages that read topology configurations:
// config's own, and the commands that must refuse what config refuses.
package configtest

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BrokenConfig is one file of config/testdata/broken: a configuration with one breakage, and
// what its error must say, from the file's leading comments "# field: ..." and "# reason: ...".
type BrokenConfig struct {
	File   string // the file's path, as dir was given
	Field  string // the field path the error must name
	Reason string // the reason the error must give
	Hosted bool   // the configuration's topology is Hosted
}

// BrokenConfigs reads the broken configurations in dir (config/testdata/broken, relative to
// the test's package). It fails t when dir holds fewer than 20, or a file lacks its comments.
func BrokenConfigs(t testing.TB, dir string) []BrokenConfig {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) < 20 {
		t.Fatalf("%s: %d files, want at least 20 (%v)", dir, len(files), err)
	}
	var out []BrokenConfig
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := BrokenConfig{File: f, Hosted: bytes.Contains(data, []byte("type: Hosted"))}
		for s := bufio.NewScanner(bytes.NewReader(data)); s.Scan(); {
			if v, ok := strings.CutPrefix(s.Text(), "# field: "); ok {
				c.Field = v
			} else if v, ok := strings.CutPrefix(s.Text(), "# reason: "); ok {
				c.Reason = v
			}
		}
		if c.Field == "" || c.Reason == "" {
			t.Fatalf("%s: no '# field:' or '# reason:' comment", f)
		}
		out = append(out, c)
	}
	return out
}
