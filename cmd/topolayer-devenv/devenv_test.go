package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/cmd/internal/cli/clitest"
	"github.com/topolayer/topolayer/config"
)

// runDevEnv executes `topolayer-devenv args...`.
func runDevEnv(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	return clitest.Execute(context.Background(), NewRootCommand, args...)
}

func TestDevEnvFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"up without --dir", []string{"up"}, "--dir is required"},
		{"up with a bad topology", []string{"up", "--dir", t.TempDir(), "--topology", "sideways"}, `--topology "sideways": must be hosted or standalone`},
		{"up with a zero timeout", []string{"up", "--dir", t.TempDir(), "--timeout", "0s"}, "--timeout 0s: must be positive"},
		{"up with a missing config", []string{"up", "--dir", t.TempDir(), "--config", "no-such.yaml"}, "--config"},
		{"down without --dir", []string{"down"}, "--dir is required"},
		{"serve with a relative dir", []string{"serve", "--dir", "rel"}, `--dir "rel": must be an absolute path`},
		{"an argument", []string{"up", "extra"}, "unknown command"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runDevEnv(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("devenv %v: err = %v, want one containing %q", tc.args, err, tc.want)
			}
		})
	}
}

func TestDevEnvTopology(t *testing.T) {
	hostedCfg := &config.TopologyConfig{Topology: config.Topology{Type: config.Hosted}}
	standaloneCfg := &config.TopologyConfig{Topology: config.Topology{Type: config.Standalone}}
	tests := []struct {
		flag string
		cfg  *config.TopologyConfig
		want config.TopologyType
	}{
		{"", nil, config.Hosted},
		{"", standaloneCfg, config.Standalone},
		{"", hostedCfg, config.Hosted},
		{"hosted", standaloneCfg, config.Hosted},
		{"Standalone", hostedCfg, config.Standalone},
	}
	for _, tc := range tests {
		if got := devEnvTopology(tc.flag, tc.cfg); got != tc.want {
			t.Errorf("devEnvTopology(%q, %v) = %s, want %s", tc.flag, tc.cfg, got, tc.want)
		}
	}
}

// up runs `<itself> serve ...` in the background.
func TestUpComplete(t *testing.T) {
	o := &UpOptions{Dir: "rel", ConfigFile: filepath.Join("..", "..", "examples", "hosted.yaml"), Timeout: time.Minute}
	if err := o.Complete(); err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	if want := []string{exe, "serve"}; !slices.Equal(o.serve, want) {
		t.Errorf("serve command = %v, want %v", o.serve, want)
	}
	if !filepath.IsAbs(o.dir) || !filepath.IsAbs(o.configFile) {
		t.Errorf("Complete left relative paths: dir %q, config %q", o.dir, o.configFile)
	}
	if o.topology != config.Hosted || o.cfg.Topology.Hosted.Namespace != "clusters-example" {
		t.Errorf("Complete: topology %s, config %+v; want Hosted from examples/hosted.yaml", o.topology, o.cfg.Topology)
	}
}

// A usage error exits 2, a failure 1, success 0.
func TestRunMainExitStatus(t *testing.T) {
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"--help"}, cli.ExitOK},
		{[]string{"up"}, cli.ExitUsage},
		{[]string{"up", "--no-such-flag"}, cli.ExitUsage},
		{[]string{"down", "--dir", t.TempDir()}, cli.ExitOK},
	}
	for _, tc := range tests {
		var out, errOut bytes.Buffer
		if got := runMain(IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, tc.args, nil); got != tc.want {
			t.Errorf("topolayer-devenv %v: exit status %d, want %d\n%s%s", tc.args, got, tc.want, out.String(), errOut.String())
		}
	}
}

func TestDevEnvDownWithNothingThere(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "management.kubeconfig")
	if err := os.WriteFile(keep, []byte("not a dev environment's"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := runDevEnv(t, "down", "--dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "nothing to do") {
		t.Errorf("devenv down on a plain directory printed %q, want nothing to do", out)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("devenv down removed a file of a directory that is no dev environment's: %v", err)
	}
}
