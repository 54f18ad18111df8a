package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/cmd/internal/clidocs"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/golden"
)

// TestCLIDocs checks that docs/cli.md is the reference of the current command tree; with
// -update (go generate ./cmd/topolayer) it rewrites it.
func TestCLIDocs(t *testing.T) {
	root := NewRootCommand(IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	clidocs.Check(t, cliDocsPath, "topolayer command-line reference", "go generate ./cmd/topolayer", root)
}

// TestDocsPlanPictures checks the DOT sources of the plan pictures in docs/images against
// `topolayer plan -o dot`; with -update (go generate ./cmd/topolayer) it rewrites them.
func TestDocsPlanPictures(t *testing.T) {
	tests := map[string]struct {
		// args returns the plan's flags; it may skip the test (the corpus is not in the repo).
		args func(t *testing.T) []string
	}{
		"plan-sample-operator-hosted.dot": {args: func(*testing.T) []string {
			return []string{"--config", hostedConfig, "--from", "../../examples/outputs/sample-operator",
				"--output-resources", "../../examples/outputs/sample-operator-output-resources.yaml", "--operator", "sample-operator"}
		}},
		"plan-cao-minimal-cluster-hosted.dot": {args: func(t *testing.T) []string {
			for _, c := range corpus.Cases(t) {
				if c.Name == corpus.CAO+"/minimal-cluster" {
					return []string{"--config", hostedConfig, "--from", c.ExpectedOutput,
						"--output-resources", c.OutputResources, "--operator", "cluster-authentication-operator"}
				}
			}
			t.Fatal("the corpus has no case minimal-cluster")
			return nil
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stdout, _, err := run(t, append([]string{"plan", "-o", "dot"}, tc.args(t)...)...)
			if err != nil {
				t.Fatal(err)
			}
			golden.File(t, filepath.Join("..", "..", "docs", "images", name), []byte(stdout), "go generate ./cmd/topolayer")
		})
	}
}
