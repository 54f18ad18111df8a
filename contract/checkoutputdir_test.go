package contract_test

import (
	"errors"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
)

// applyConfigMap is a valid Apply of ConfigMap ns/name whose body carries data.
func applyConfigMap(name, data string) contract.Mutation {
	return contract.Mutation{
		Class: contract.ClassManagement,
		Metadata: contract.Metadata{
			Action:       contract.ActionApply,
			Name:         name,
			Namespace:    "ns",
			FieldManager: "sample",
			ResourceType: contract.ResourceType{Version: "v1", Resource: "configmaps"},
		},
		Body: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: ns\ndata:\n  key: " + data + "\n"),
	}
}

// TestCheckOutputDirAsRead checks that CheckOutputDir prepares mutations built in memory as
// ReadOutputDir reads them back from the directory WriteOutputDir writes: same order, same
// Path, same parsed Object.
func TestCheckOutputDirAsRead(t *testing.T) {
	dir := contracttest.WriteValidOutputDir(t, filepath.Join(t.TempDir(), "out"))
	read := contracttest.ReadOutputDir(t, dir)
	out := &contract.OutputDir{Mutations: contracttest.ValidMutations()}
	if err := contract.CheckOutputDir(out, contract.ReadOptions{}); err != nil {
		t.Fatalf("CheckOutputDir of the valid mutations: %v", err)
	}
	if len(out.Mutations) != len(read.Mutations) {
		t.Fatalf("%d mutations, read %d", len(out.Mutations), len(read.Mutations))
	}
	for i, m := range out.Mutations {
		r := read.Mutations[i]
		if m.Path != r.Path || m.Class != r.Class || m.Metadata.Identity() != r.Metadata.Identity() {
			t.Errorf("mutation %d: %s %s, read %s %s", i, m.Path, m.Metadata.Identity(), r.Path, r.Metadata.Identity())
		}
		if diff := cmp.Diff(r.Object, m.Object); diff != "" {
			t.Errorf("%s: Object (-read +checked):\n%s", m.Path, diff)
		}
	}
}

func TestCheckOutputDirApply(t *testing.T) {
	m := applyConfigMap("settings", "value")
	// An Object set beside the body that disagrees with it: the body is what is written, so
	// the body is what is trusted.
	m.Object = &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "namespace": "ns"},
		"data":     map[string]any{"key": "not what the body says"},
	}}
	out := &contract.OutputDir{Mutations: []contract.Mutation{m}}
	if err := contract.CheckOutputDir(out, contract.ReadOptions{}); err != nil {
		t.Fatal(err)
	}
	got := out.Mutations[0]
	body, _, _ := contract.MutationFiles(&got)
	if want := path.Join("Management", body); got.Path != want {
		t.Errorf("Path = %q, want %q", got.Path, want)
	}
	if !strings.HasPrefix(got.Path, "Management/Apply/namespaces/ns/core/configmaps/") || !strings.HasSuffix(got.Path, "-body-settings.yaml") {
		t.Errorf("Path = %q, not the body file of an Apply of ConfigMap ns/settings", got.Path)
	}
	want := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "settings", "namespace": "ns"},
		"data":     map[string]any{"key": "value"},
	}
	if got.Object == nil {
		t.Fatal("Object not parsed")
	}
	if diff := cmp.Diff(want, got.Object.Object); diff != "" {
		t.Errorf("Object (-body +got):\n%s", diff)
	}
}

func TestCheckOutputDirRefuses(t *testing.T) {
	big := applyConfigMap("big", strings.Repeat("x", 200))
	for _, tc := range []struct {
		name      string
		mutations func() []contract.Mutation
		opts      contract.ReadOptions
		want      string // a fragment of the error
		file      string // a fragment of the file the error names
	}{
		{
			name: "unknown class",
			mutations: func() []contract.Mutation {
				m := applyConfigMap("settings", "v")
				m.Class = "Infrastructure"
				return []contract.Mutation{m}
			},
			want: `class "Infrastructure" is not one of`, file: "Infrastructure/Apply/",
		},
		{
			name: "invalid metadata",
			mutations: func() []contract.Mutation {
				m := applyConfigMap("settings", "v")
				m.Metadata.Action = "Replace"
				return []contract.Mutation{m}
			},
			want: "metadata: action", file: "Management/Replace/",
		},
		{
			name: "body named unlike the metadata",
			mutations: func() []contract.Mutation {
				m := applyConfigMap("settings", "v")
				m.Metadata.Name = "other"
				return []contract.Mutation{m}
			},
			want: `metadata.name: "settings", but the metadata says "other"`, file: "-body-other.yaml",
		},
		{
			name: "body kind wrong for the resource",
			mutations: func() []contract.Mutation {
				m := applyConfigMap("settings", "v")
				m.Body = []byte("apiVersion: v1\nkind: Secret\nmetadata:\n  name: settings\n  namespace: ns\n")
				return []contract.Mutation{m}
			},
			want: `kind: "Secret", but configmaps holds ConfigMap objects`, file: "core/configmaps/",
		},
		{
			name: "undecodable options",
			mutations: func() []contract.Mutation {
				m := applyConfigMap("settings", "v")
				m.Options = []byte("force: [")
				return []contract.Mutation{m}
			},
			want: "decode options", file: "-options-settings.yaml",
		},
		{
			name: "two mutations on the same files",
			mutations: func() []contract.Mutation {
				return []contract.Mutation{applyConfigMap("settings", "v"), applyConfigMap("settings", "v")}
			},
			want: "a second mutation on the same files", file: "-body-settings.yaml",
		},
		{
			name:      "a body over MaxFileSize",
			mutations: func() []contract.Mutation { return []contract.Mutation{big} },
			opts:      contract.ReadOptions{MaxFileSize: 200},
			want:      "over the limit of 200", file: "-body-big.yaml",
		},
		{
			name: "all over MaxTotalSize",
			mutations: func() []contract.Mutation {
				return []contract.Mutation{applyConfigMap("a", "v"), applyConfigMap("b", "v")}
			},
			opts: contract.ReadOptions{MaxTotalSize: int64(len(applyConfigMap("a", "v").Body)) + 10},
			want: "over its limit", file: "-body-b.yaml",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &contract.OutputDir{Mutations: tc.mutations()}
			err := contract.CheckOutputDir(out, tc.opts)
			if err == nil {
				t.Fatal("no error")
			}
			var fe *contract.FileError
			if !errors.As(err, &fe) || !errors.Is(err, contract.ErrMalformed) {
				t.Fatalf("error %#v is not a malformed *FileError", err)
			}
			if !strings.Contains(fe.File, tc.file) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error should name a file with %q and say %q:\n%v", tc.file, tc.want, err)
			}
		})
	}
	t.Run("the same mutations within the limits", func(t *testing.T) {
		// The cases above fail because of their limits, not their mutations.
		out := &contract.OutputDir{Mutations: []contract.Mutation{big, applyConfigMap("a", "v"), applyConfigMap("b", "v")}}
		if err := contract.CheckOutputDir(out, contract.ReadOptions{MaxFileSize: 1000}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("nil", func(t *testing.T) {
		if err := contract.CheckOutputDir(nil, contract.ReadOptions{}); err == nil {
			t.Fatal("no error for a nil output directory")
		}
	})
}
