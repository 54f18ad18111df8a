package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestMentions(t *testing.T) {
	const dir = "/tmp/env"
	tests := []struct {
		args []string
		want bool
	}{
		{[]string{"etcd", "--data-dir=/tmp/env/data/guest/etcd"}, true},
		{[]string{"topolayer", "devenv", "serve", "--dir", "/tmp/env"}, true},
		{[]string{"kube-apiserver", "--client-ca-file=/tmp/env/data/x.crt,/other"}, true},
		{[]string{"etcd", "--data-dir=/tmp/env2/data"}, false},
		{[]string{"etcd", "--data-dir=/var/tmp/env/data"}, false},
		{[]string{"etcd", "--data-dir=/tmp/environment"}, false},
		{[]string{"sh", "-c", "x=/tmp/env2; y=/tmp/env"}, true},
		{nil, false},
	}
	for _, tc := range tests {
		if got := mentions(tc.args, dir); got != tc.want {
			t.Errorf("mentions(%q, %q) = %v, want %v", tc.args, dir, got, tc.want)
		}
	}
}

func TestDevEnvRefusesRelativeDir(t *testing.T) {
	for _, dir := range []string{"", "rel/dir", "/tmp/../tmp/x/"} {
		d := DevEnv{Dir: dir}
		if err := d.Stop(t.Context(), time.Second); err == nil || errors.Is(err, ErrNoDevEnv) {
			t.Errorf("DevEnv{%q}.Stop: err = %v, want a path error", dir, err)
		}
	}
}

// Stop leaves a directory that is no dev environment's alone, even with files of the same
// names in it.
func TestDevEnvStopLeavesForeignDir(t *testing.T) {
	dir := t.TempDir()
	files := []string{"management.kubeconfig", DevEnvLogFile, filepath.Join(DevEnvDataDir, "keep")}
	for _, f := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := (DevEnv{Dir: dir}).Stop(t.Context(), time.Second); !errors.Is(err, ErrNoDevEnv) {
		t.Errorf("Stop: err = %v, want ErrNoDevEnv", err)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("Stop removed %s: %v", f, err)
		}
	}
	// A nonexistent directory holds no dev environment either.
	if err := (DevEnv{Dir: filepath.Join(dir, "none")}).Stop(t.Context(), time.Second); !errors.Is(err, ErrNoDevEnv) {
		t.Errorf("Stop of a missing directory: err = %v, want ErrNoDevEnv", err)
	}
}
