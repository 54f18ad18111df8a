package index_test

import (
	"fmt"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/mom/index"
)

func Example() {
	ix := index.New()
	for op, y := range map[string]string{"sample-operator": sampleInputs, "sample-audit-operator": auditInputs} {
		in, err := contract.ParseInputResources([]byte(y))
		if err != nil {
			panic(err)
		}
		if err := ix.Add(op, in); err != nil {
			panic(err)
		}
	}
	fmt.Println(ix.Interested(contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "openshift-config", Name: "audit-policy"}, nil))
	fmt.Println(ix.Interested(contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "openshift-config", Name: "sample-settings"}, nil))
	// Output:
	// [sample-audit-operator]
	// [sample-audit-operator sample-operator]
}
