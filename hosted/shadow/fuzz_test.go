package shadow

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzReadCRDs: any file of manifests reads as CRDs or fails with an error, without
// panicking. Each CRD read gets a shadow or an error; a shadow Validate accepts is written,
// and reads back as it was written.
func FuzzReadCRDs(f *testing.F) {
	f.Add([]byte(widgetCRD))
	f.Add([]byte("---\n" + widgetCRD + "---\n" + configMap))
	f.Add([]byte(`{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"}, "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Cluster", "versions": []}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		file := filepath.Join(dir, "crds.yaml")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		crds, err := ReadCRDs(file)
		if err != nil {
			return
		}
		out := filepath.Join(dir, "out")
		for _, crd := range crds {
			s, err := CRD(crd)
			if err != nil || Validate(s) != nil {
				continue
			}
			if err := WriteCRD(out, s); err != nil {
				t.Fatalf("a valid shadow does not write: %v", err)
			}
			back, err := ReadCRDs(filepath.Join(out, s.Name+".yaml"))
			if err != nil {
				t.Fatalf("a written shadow does not read: %v", err)
			}
			if len(back) != 1 {
				t.Fatalf("a written shadow reads as %d CRDs", len(back))
			}
			if diff := cmp.Diff(s.Spec, back[0].Spec); diff != "" {
				t.Fatalf("the shadow's spec changed when written (-written +read):\n%s", diff)
			}
		}
	})
}
