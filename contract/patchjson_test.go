package contract_test

import (
	"path/filepath"
	"testing"

	"github.com/topolayer/topolayer/contract"
)

// TestPatchBodyIsJSON: a patch body that is JSON is read as JSON, with the string escapes
// YAML does not know (\/), as the API server reads it.
func TestPatchBodyIsJSON(t *testing.T) {
	m := contract.Mutation{Class: contract.ClassManagement, Body: []byte(`{"metadata":{"annotations":{"a.example\/b":"c"}}}`)}
	m.Metadata.Action = contract.ActionPatch
	m.Metadata.PatchType = contract.PatchTypeMerge
	m.Metadata.SetIdentity(contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "ns", Name: "n"})
	dir := filepath.Join(t.TempDir(), "out")
	if err := contract.WriteOutputDir(dir, &contract.OutputDir{Mutations: []contract.Mutation{m}}, contract.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	out, err := contract.ReadOutputDir(dir, contract.ReadOptions{})
	if err != nil {
		t.Fatalf("a JSON merge patch with an escaped slash: %v", err)
	}
	if len(out.Mutations) != 1 {
		t.Fatalf("%d mutations, want 1", len(out.Mutations))
	}
}
