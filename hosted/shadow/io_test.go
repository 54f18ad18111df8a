package shadow

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/topolayer/topolayer/internal/contracttest"
	"sigs.k8s.io/yaml"
)

// configMap is a document that is not a CRD.
const configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: not-a-crd
`

// TestReadCRDs: files and directories, several documents a file, and an error naming the
// file and the document for anything that is not a CRD of apiextensions.k8s.io/v1.
func TestReadCRDs(t *testing.T) {
	gadgets := strings.ReplaceAll(widgetCRD, "widget", "gadget")
	tests := map[string]struct {
		files     map[string]string
		paths     []string // relative to the directory; "." for the directory itself
		wantNames []string
		wantErr   []string // substrings, with <dir> for the directory
		wantIs    error
	}{
		"one file": {
			files:     map[string]string{"w.yaml": widgetCRD},
			paths:     []string{"w.yaml"},
			wantNames: []string{"widgets.example.com"},
		},
		"several documents, empty ones skipped": {
			files:     map[string]string{"w.yaml": "---\n# comment only\n---\n" + widgetCRD + "---\n" + gadgets + "---\n"},
			paths:     []string{"w.yaml"},
			wantNames: []string{"widgets.example.com", "gadgets.example.com"},
		},
		"directory: manifests only, by name, not recursive": {
			files: map[string]string{
				"b.yml":            widgetCRD,
				"a.yaml":           gadgets,
				"doc.go":           "package crds\n",
				"sub/c.yaml":       configMap,
				"README.md":        "not yaml",
				"z.json":           `{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "things.example.com"}, "spec": {"group": "example.com", "names": {"kind": "Thing", "plural": "things"}, "scope": "Cluster", "versions": []}}`,
				"ignored.yaml.bak": configMap,
			},
			paths:     []string{"."},
			wantNames: []string{"gadgets.example.com", "widgets.example.com", "things.example.com"},
		},
		"the same file twice": {
			files:     map[string]string{"w.yaml": widgetCRD},
			paths:     []string{"w.yaml", "./w.yaml", "."},
			wantNames: []string{"widgets.example.com"},
		},
		"a document that is not a CRD": {
			files:   map[string]string{"mixed.yaml": widgetCRD + "---\n" + configMap},
			paths:   []string{"mixed.yaml"},
			wantErr: []string{`<dir>/mixed.yaml: document 2: apiVersion "v1", kind "ConfigMap": not a CustomResourceDefinition of apiextensions.k8s.io/v1`},
			wantIs:  ErrNotCRD,
		},
		"a CRD of v1beta1": {
			files:   map[string]string{"old.yaml": strings.Replace(widgetCRD, "apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1", 1)},
			paths:   []string{"old.yaml"},
			wantErr: []string{`<dir>/old.yaml: document 1: apiVersion "apiextensions.k8s.io/v1beta1"`},
			wantIs:  ErrNotCRD,
		},
		"every bad file is reported": {
			files:   map[string]string{"a.yaml": configMap, "b.yaml": "[1, 2]\n", "c.yaml": widgetCRD},
			paths:   []string{"."},
			wantErr: []string{"<dir>/a.yaml: document 1: ", "<dir>/b.yaml: document 1: "},
		},
		"an unknown field": {
			files:   map[string]string{"w.yaml": strings.Replace(widgetCRD, "  scope: Cluster\n", "  scope: Cluster\n  scoop: Cluster\n", 1)},
			paths:   []string{"w.yaml"},
			wantErr: []string{`<dir>/w.yaml: document 1: crd widgets.example.com: `, `strict decoding error: unknown field "spec.scoop"`},
		},
		"no such file": {
			paths:   []string{"missing.yaml"},
			wantErr: []string{"<dir>/missing.yaml: no such file or directory"},
		},
	}
	for tn, tc := range tests {
		t.Run(tn, func(t *testing.T) {
			dir := contracttest.TempTree(t, tc.files)
			var paths []string
			for _, p := range tc.paths {
				paths = append(paths, filepath.Join(dir, p))
			}
			crds, err := ReadCRDs(paths...)
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("no error; want %q", tc.wantErr)
				}
				for _, want := range tc.wantErr {
					if want = strings.ReplaceAll(want, "<dir>", dir); !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
				if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
					t.Errorf("error %v is not %v", err, tc.wantIs)
				}
				if crds != nil {
					t.Errorf("%d CRDs returned with the error", len(crds))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range crds {
				names = append(names, c.Name)
			}
			if diff := cmp.Diff(tc.wantNames, names); diff != "" {
				t.Errorf("CRDs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteCRD: a written shadow reads back the same, without status.
func TestWriteCRD(t *testing.T) {
	s, err := CRD(decodeCRDString(t, widgetCRD))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "new")
	if err := WriteCRD(dir, s); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "widgets.example.com.shadow.topolayer.dev.yaml")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var top struct {
		Status   any            `json:"status"`
		Metadata map[string]any `json:"metadata"`
	}
	if err := yaml.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	if _, ok := top.Metadata["creationTimestamp"]; ok || top.Status != nil {
		t.Errorf("%s has status or creationTimestamp:\n%s", file, data)
	}
	back, err := ReadCRDs(file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, back[0]); len(back) != 1 || diff != "" {
		t.Errorf("read back (-written +read):\n%s", diff)
	}

	for _, name := range []string{"", "..", "a/b"} {
		bad := s.DeepCopy()
		bad.Name = name
		if err := WriteCRD(dir, bad); !errorContains(err, "not a file name") {
			t.Errorf("name %q: error %v", name, err)
		}
	}
}
