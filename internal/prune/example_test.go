package prune_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/prune"
)

// Prune a must-gather to the one ConfigMap an operator reads, and the Secret an
// Authentication names; the list keeps every field the must-gather had.
func Example() {
	mustGather, _ := os.MkdirTemp("", "must-gather")
	defer os.RemoveAll(mustGather)
	write := func(rel, content string) {
		p := filepath.Join(mustGather, rel)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(content), 0o644)
	}
	write("namespaces/demo/core/configmaps.yaml", `apiVersion: v1
kind: ConfigMapList
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: unread, namespace: demo}}
- {apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: demo, resourceVersion: "42"}, data: {k: v}}
`)
	write("namespaces/openshift-config/core/secrets.yaml", `apiVersion: v1
kind: SecretList
items:
- {apiVersion: v1, kind: Secret, metadata: {name: webhook, namespace: openshift-config}}
`)
	write("cluster-scoped-resources/config.openshift.io/authentications/cluster.yaml", `apiVersion: config.openshift.io/v1
kind: Authentication
metadata: {name: cluster}
spec: {webhookTokenAuthenticator: {kubeConfig: {name: webhook}}}
`)
	declared, err := contract.ParseInputResources([]byte(`applyConfigurationResources:
  exactResources:
  - {group: "", version: v1, resource: configmaps, namespace: demo, name: settings}
  resourceReferences:
  - type: ImplicitNamespacedReference
    referringResource: {group: config.openshift.io, version: v1, resource: authentications, name: cluster}
    implicitNamespacedReference:
      {group: "", version: v1, resource: secrets, namespace: openshift-config, nameJSONPath: $.spec.webhookTokenAuthenticator.kubeConfig.name}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	in, err := contract.ReadInputDir(mustGather, contract.ReadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	lists, err := prune.Prune(in, declared.ApplyConfigurationResources)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range lists {
		fmt.Println(l.Path, len(l.Items))
	}
	data, _ := lists[1].Marshal()
	fmt.Print(string(data))
	// Output:
	// cluster-scoped-resources/config.openshift.io/authentications.yaml 1
	// namespaces/demo/core/configmaps.yaml 1
	// namespaces/openshift-config/core/secrets.yaml 1
	// apiVersion: v1
	// items:
	// - apiVersion: v1
	//   data:
	//     k: v
	//   kind: ConfigMap
	//   metadata:
	//     name: settings
	//     namespace: demo
	//     resourceVersion: "42"
	// kind: ConfigMapList
}
