package translate_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update rewrites the golden files under testdata/ ("go test ./translate -update"); the
// flag is accepted by every test package, so that "go test ./... -update" refreshes them all.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// checkGolden compares got with the golden file at path, or rewrites it with -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./translate -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s: mismatch (-want +got); run go test ./translate -update if the change is intended:\n%s", path, diff)
	}
}
