package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/config/configtest"
)

// TestBrokenConfigFiles: every file of testdata/broken is refused, and the error names the
// file, the field path and the reason. cmd/topolayer runs validate and run on the same files.
func TestBrokenConfigFiles(t *testing.T) {
	for _, c := range configtest.BrokenConfigs(t, "testdata/broken") {
		t.Run(filepath.Base(c.File), func(t *testing.T) {
			_, err := config.Load(c.File)
			wantRefused(t, err, c.File, c.File+": ", c.Field, c.Reason)
		})
	}
}

// wantRefused fails t unless err says each of want. accepted is what was refused, shown when
// it was accepted (err is nil).
func wantRefused(t *testing.T, err error, accepted string, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted:\n%s", accepted)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error does not say %q:\n%v", w, err)
		}
	}
}
