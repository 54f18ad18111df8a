package harness_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/mom/harness"
)

// Compare an expected and an actual output directory that differ in one ConfigMap and in an
// event: the event is ignored, the ConfigMap is shown as a diff.
func ExampleCompare() {
	tmp, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(tmp)
	expected := contracttest.ValidMutations()[:4] // a Namespace, a ConfigMap, a Deployment, an event
	actual := slices.Clone(expected)
	actual[1].Body = []byte(strings.Replace(string(actual[1].Body), `replicas: "2"`, `replicas: "3"`, 1))
	actual[3].Body = []byte(strings.Replace(string(actual[3].Body), "reason: Created", "reason: Again", 1))
	_ = contract.WriteOutputDir(filepath.Join(tmp, "expected"), &contract.OutputDir{Mutations: expected}, contract.WriteOptions{})
	_ = contract.WriteOutputDir(filepath.Join(tmp, "actual"), &contract.OutputDir{Mutations: actual}, contract.WriteOptions{})

	for _, d := range harness.Compare(filepath.Join(tmp, "expected"), filepath.Join(tmp, "actual")) {
		fmt.Println(d)
	}
	// Output:
	// Management: differs: Create configmaps openshift-sample/settings by "sample-Controller" (expected Management/Create/namespaces/openshift-sample/core/configmaps/c06d-body-settings.yaml, actual Management/Create/namespaces/openshift-sample/core/configmaps/4b21-body-settings.yaml):
	//     body:
	//     --- expected
	//     +++ actual
	//     @@ -1,6 +1,6 @@
	//      apiVersion: v1
	//      data:
	//     -  replicas: "2"
	//     +  replicas: "3"
	//      kind: ConfigMap
	//      metadata:
	//        name: settings
}
