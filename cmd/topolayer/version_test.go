package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/internal/contracttest"
)

func TestVersion(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/topolayer/topolayer", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-23T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}}
	tests := map[string]struct {
		output string
		info   *debug.BuildInfo
		want   string
	}{
		"line":          {info: info, want: "topolayer v0.3.0, revision abc123 (modified) of 2026-11-23T10:00:00Z, go1.26.8\n"},
		"json":          {output: "json", info: info, want: `"revision": "abc123"`},
		"yaml":          {output: "yaml", info: info, want: "version: v0.3.0\n"},
		"devel, no vcs": {info: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/topolayer/topolayer"}}, want: "topolayer (devel), go1.26.8\n"},
		"no build info": {want: "topolayer unknown, unknown\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			o := &VersionOptions{Output: tc.output, buildInfo: func() (*debug.BuildInfo, bool) { return tc.info, tc.info != nil }, IOStreams: IOStreams{Out: &out}}
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			if err := o.Run(nil); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("got %q, want %q in it", out.String(), tc.want)
			}
			if tc.output == "json" {
				var v VersionInfo
				if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Module != "github.com/topolayer/topolayer" || !v.Modified {
					t.Errorf("json %s: %v", out.String(), err)
				}
			}
		})
	}
}

// TestExitStatus: the same mistake gives the same status in every command: 2 for the
// command line, 1 for a failure.
func TestExitStatus(t *testing.T) {
	dir := contracttest.WriteValidOutputDir(t, filepath.Join(t.TempDir(), "out"))
	declFile := withoutNamespaceDeclared(t)
	tests := map[string]struct {
		args []string
		want int
	}{
		"unknown flag":              {[]string{"plan", "--nope"}, cli.ExitUsage},
		"missing flag":              {[]string{"plan"}, cli.ExitUsage},
		"unknown output":            {[]string{"version", "-o", "xml"}, cli.ExitUsage},
		"parity missing flag":       {[]string{"parity"}, cli.ExitUsage},
		"apply conflicting flags":   {[]string{"apply", "--config", "x", "--from", "y", "--operator", "o", "--kubeconfig", "k", "--guest-kubeconfig", "g"}, cli.ExitUsage},
		"an argument":               {[]string{"validate", "extra"}, cli.ExitUsage},
		"missing file":              {[]string{"validate", "--config", "nope.yaml"}, cli.ExitFailed},
		"a rejected entry":          {[]string{"plan", "--config", standaloneConfig, "--from", dir, "--output-resources", declFile}, cli.ExitFailed},
		"version":                   {[]string{"version"}, cli.ExitOK},
		"a plan with nothing amiss": {[]string{"plan", "--config", standaloneConfig, "--from", "../../examples/outputs/sample-operator"}, cli.ExitOK},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			got := runMain(IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, tc.args, nil, stopGrace)
			if got != tc.want {
				t.Errorf("exit %d, want %d\n%s%s", got, tc.want, out.String(), errOut.String())
			}
			if got == cli.ExitUsage && !strings.Contains(errOut.String(), "--help' for usage") {
				t.Errorf("a usage error does not point at --help:\n%s", errOut.String())
			}
		})
	}
}
