package contract_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/corpus"
)

// TestCorpusRoundTrip reads every apply-configuration case of the corpus and writes it back:
// the same file names and the same bytes, with metadata and controller-results written from
// the parsed values in the case's own spelling of the name key.
func TestCorpusRoundTrip(t *testing.T) {
	for _, c := range corpus.Cases(t) {
		t.Run(c.Name, func(t *testing.T) {
			out, err := contract.ReadOutputDir(c.ExpectedOutput, contract.ReadOptions{})
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if len(out.Mutations) == 0 {
				t.Fatal("no mutations read")
			}
			for _, m := range out.Mutations {
				if m.Metadata.NameKey != c.NameKey {
					t.Fatalf("%s: name key %q, the corpus case uses %q", m.Path, m.Metadata.NameKey, c.NameKey)
				}
			}
			dir := filepath.Join(t.TempDir(), "out")
			if err := contract.WriteOutputDir(dir, out, contract.WriteOptions{NameKey: c.NameKey}); err != nil {
				t.Fatalf("write: %v", err)
			}
			want, got := contracttest.ReadTree(t, c.ExpectedOutput), contracttest.ReadTree(t, dir)
			if diff := cmp.Diff(slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got))); diff != "" {
				t.Fatalf("file names differ (-want +got):\n%s", diff)
			}
			for name, w := range want {
				if diff := cmp.Diff(w, got[name]); diff != "" {
					t.Errorf("%s differs (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

// TestCorpusOldFixtures reads the oldest fixtures (numeric prefixes) and writes them back.
func TestCorpusOldFixtures(t *testing.T) {
	for _, side := range []string{"lhs", "rhs"} {
		t.Run(side, func(t *testing.T) {
			src := corpus.Path(t, corpus.MOM, "pkg/library/libraryapplyconfiguration/testdata/need-useful-diff", side)
			out := contracttest.ReadOutputDir(t, src)
			dir := filepath.Join(t.TempDir(), "out")
			if err := contract.WriteOutputDir(dir, out, contract.WriteOptions{NameKey: contract.NameKeyLegacy}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(contracttest.ReadTree(t, src), contracttest.ReadTree(t, dir)); diff != "" {
				t.Fatalf("round trip differs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCorpusClassMatching matches every mutation of every CAO case against CAO's own
// output-resources: each lands in exactly the class folder the operator wrote it to.
func TestCorpusClassMatching(t *testing.T) {
	for _, c := range corpus.CAOCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			declared := readOutputResources(t, c.OutputResources)
			out := contracttest.ReadOutputDir(t, c.ExpectedOutput)
			for _, m := range out.Mutations {
				got := declared.ClassesOf(m.Identity())
				if !slices.Equal(got, []contract.Class{m.Class}) {
					t.Errorf("%s: %s matches classes %v, want exactly [%s]", m.Path, m.Identity(), got, m.Class)
				}
			}
		})
	}
}

// TestCorpusDeclarationsParse parses CAO's declarations and the pruner's input-resources.
func TestCorpusDeclarationsParse(t *testing.T) {
	root := corpus.Dir(t)
	inputs, err := filepath.Glob(filepath.Join(root, corpus.MOM, "pkg/library/libraryinputresources/test-data/*/input-resources.yaml"))
	if err != nil || len(inputs) != 4 {
		t.Fatalf("want the 4 pruner cases, found %d (%v)", len(inputs), err)
	}
	inputs = append(inputs, filepath.Join(root, corpus.CAO, "_generated/input-resources.yaml"))
	for _, f := range inputs {
		rel, _ := filepath.Rel(root, f)
		t.Run(rel, func(t *testing.T) {
			in := contracttest.ParseFile(t, f, contract.ParseInputResources)
			l := in.ApplyConfigurationResources
			if len(l.ExactResources)+len(l.LabelSelectedResources)+len(l.ResourceReferences) == 0 {
				t.Fatal("parsed no resources")
			}
		})
	}
	out := readOutputResources(t, filepath.Join(root, corpus.CAO, "_generated/output-resources.yaml"))
	if len(out.ManagementResources.EventingNamespaces) == 0 || len(out.UserWorkloadResources.GeneratedNameResources) == 0 {
		t.Fatalf("CAO output-resources lost eventing namespaces or generated names: %+v", out)
	}
}

// TestCorpusInputDirs reads every input directory of the corpus, and the pruner's expected
// outputs, which are input directories too.
func TestCorpusInputDirs(t *testing.T) {
	root := corpus.Dir(t)
	var dirs []string
	for _, c := range corpus.Cases(t) {
		dirs = append(dirs, c.InputDir)
	}
	more, _ := filepath.Glob(filepath.Join(root, corpus.MOM, "pkg/library/libraryinputresources/test-data/*/*"))
	for _, d := range more {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			dirs = append(dirs, d)
		}
	}
	for _, d := range dirs {
		rel, _ := filepath.Rel(root, d)
		t.Run(rel, func(t *testing.T) {
			in := contracttest.ReadInputDir(t, d)
			if len(in.Objects()) == 0 {
				t.Fatal("no objects read")
			}
			for _, o := range in.Objects() {
				id := o.Identity()
				if id.Name == "" {
					continue // a nameless list item: LIST returns it, GET cannot
				}
				got, err := in.Get(id.GroupVersionResource(), id.Namespace, id.Name)
				if err != nil {
					t.Fatalf("%s: Get(%s): %v", o.File, id, err)
				}
				if got.GetName() != id.Name {
					t.Fatalf("%s: Get(%s) returned %s", o.File, id, got.GetName())
				}
			}
		})
	}
}

func readOutputResources(t *testing.T, file string) *contract.OutputResources {
	t.Helper()
	return contracttest.ParseFile(t, file, contract.ParseOutputResources)
}
