package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/cmd/internal/cli"
)

// TestRunLogFormats: console by default, one JSON object a line with --log-format json, and
// an unknown format is a usage error.
func TestRunLogFormats(t *testing.T) {
	for _, format := range []string{"console", "json"} {
		t.Run(format, func(t *testing.T) {
			var out bytes.Buffer
			log, err := newLogger(&out, format, 0)
			if err != nil {
				t.Fatal(err)
			}
			log.WithName("scheduler").WithValues("operator", "sample", "run", 1).Info("run started", "causes", 2)
			line := strings.TrimSpace(out.String())
			var obj map[string]any
			isJSON := json.Unmarshal([]byte(line), &obj) == nil
			if isJSON != (format == "json") || !strings.Contains(line, "run started") || !strings.Contains(line, "scheduler") {
				t.Errorf("%s line: %s", format, line)
			}
			if isJSON && (obj["operator"] != "sample" || obj["run"] != 1.0) {
				t.Errorf("json values: %s", line)
			}
		})
	}
	if _, err := newLogger(&bytes.Buffer{}, "text", 0); cli.ExitStatus(err) != cli.ExitUsage {
		t.Errorf("--log-format text: %v", err)
	}
	if f := NewCmdRun(IOStreams{}).Flags().Lookup("log-format"); f == nil || f.DefValue != "console" {
		t.Errorf("--log-format default: %v", f)
	}
}
