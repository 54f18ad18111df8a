package contract_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
)

// Read an operator's output directory, match each mutation against its declarations, and
// write the directory back with the legacy metadata name key.
func Example() {
	tmp, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(tmp)
	out := &contract.OutputDir{Mutations: contracttest.ValidMutations()[:3]}
	_ = contract.WriteOutputDir(filepath.Join(tmp, "out"), out, contract.WriteOptions{})

	read, err := contract.ReadOutputDir(filepath.Join(tmp, "out"), contract.ReadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	declared := contracttest.ValidOutputResources()
	for _, m := range read.Mutations {
		fmt.Println(m.Class, m.Metadata.Action, m.Identity(), "declared:", declared.ForClass(m.Class).Matches(m.Identity()))
	}
	_ = contract.WriteOutputDir(filepath.Join(tmp, "legacy"), read, contract.WriteOptions{NameKey: contract.NameKeyLegacy})
	// Output:
	// Management Create namespaces openshift-sample declared: true
	// Management Create deployments.apps openshift-sample/sample declared: true
	// Management Create configmaps openshift-sample/settings declared: true
}
