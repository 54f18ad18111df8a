package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/topolayer/topolayer/internal/contracttest"
)

// update is the -update flag: rewrite the golden files rather than compare with them.
var update = flag.Bool("update", false, "rewrite the golden files (and generated documents) the tests compare with")

// Updating reports whether the test run was asked to rewrite the golden files (-update).
func Updating() bool {
	return *update
}

// File compares got with the golden file at path, failing tb with the difference (-want
// +got); with -update it writes got to path instead, making its directory. regen is the
// command that rewrites the file, named when it is missing or differs.
func File(tb testing.TB, path string, got []byte, regen string) {
	tb.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (run %s to write it)", err, regen)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		tb.Errorf("%s: mismatch (-want +got); run %s if the change is intended:\n%s", path, regen, diff)
	}
}

// Dir compares the files below got, a directory the test wrote, with those below the golden
// directory dir, failing tb with the difference (-want +got, keyed by slash-separated path);
// with -update it replaces dir by a copy of got instead. regen is the command that rewrites
// dir, named when it differs.
func Dir(tb testing.TB, dir, got, regen string) {
	tb.Helper()
	if *update {
		if err := os.RemoveAll(dir); err != nil {
			tb.Fatal(err)
		}
		if err := os.CopyFS(dir, os.DirFS(got)); err != nil {
			tb.Fatalf("copy %s to %s: %v", got, dir, err)
		}
		return
	}
	if diff := cmp.Diff(contracttest.ReadTree(tb, dir), contracttest.ReadTree(tb, got)); diff != "" {
		tb.Errorf("%s: mismatch (-want +got); run %s if the change is intended:\n%s", dir, regen, diff)
	}
}
