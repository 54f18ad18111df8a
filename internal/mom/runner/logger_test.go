package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// TestLoggerKeepsTheRunsKeysOnce: the scheduler names the operator and the run on the
// logger of the context; the runner's logger does not write them a second time.
func TestLoggerKeepsTheRunsKeysOnce(t *testing.T) {
	var lines []string
	base := funcr.NewJSON(func(obj string) { lines = append(lines, obj) }, funcr.Options{})
	ctx := logr.NewContext(context.Background(), base.WithName("scheduler").WithValues("operator", "sample", "run", 3))
	logger(ctx).Info("operator started", "pid", 42)
	if len(lines) != 1 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, key := range []string{`"operator"`, `"run"`} {
		if n := strings.Count(lines[0], key); n != 1 {
			t.Errorf("%s appears %d times in %s", key, n, lines[0])
		}
	}
	if !strings.Contains(lines[0], `"logger":"scheduler/runner"`) {
		t.Errorf("logger name: %s", lines[0])
	}
}
