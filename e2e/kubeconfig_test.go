package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/topolayer/topolayer/internal/e2e/cluster"
)

// TestWriteKubeconfigs writes the kubeconfigs of both environments and uses each, as kubectl
// would, to list namespaces.
func TestWriteKubeconfigs(t *testing.T) {
	tests := []struct {
		name string
		env  *cluster.Environment
		// wantNamespaces maps each kubeconfig file to namespaces it must see.
		wantNamespaces map[string][]string
	}{
		{"hosted", hosted, map[string][]string{
			"management.kubeconfig": {"default", "clusters-example"},
			"guest.kubeconfig":      {"default"},
		}},
		{"standalone", standalone, map[string][]string{
			"cluster.kubeconfig": {"default"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tc.env.WriteKubeconfigs(dir); err != nil {
				t.Fatal(err)
			}
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var files []string
			for _, e := range entries {
				files = append(files, e.Name())
			}
			for file, want := range tc.wantNamespaces {
				if !slices.Contains(files, file) {
					t.Errorf("%s not written (have %v)", file, files)
					continue
				}
				path := filepath.Join(dir, file)
				if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
					t.Errorf("%s: mode %v, want readable by the owner only (it holds a client key)", file, fi.Mode().Perm())
				}
				got := namespacesVia(t, path)
				for _, ns := range want {
					if !slices.Contains(got, ns) {
						t.Errorf("%s: namespaces %v lack %s", file, got, ns)
					}
				}
			}
			if len(files) != len(tc.wantNamespaces) {
				t.Errorf("wrote %v, want exactly %d kubeconfigs", files, len(tc.wantNamespaces))
			}
		})
	}
}
