package prune_test

import (
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/prune"
)

// FuzzPrune feeds arbitrary input-resources documents and an arbitrary referring object
// (the Ingress list file that JSONPaths are evaluated on) through ParseInputResources,
// ReadInputDir and Prune: nothing may panic, and whatever Prune returns must marshal.
func FuzzPrune(f *testing.F) {
	f.Add([]byte(`applyConfigurationResources:
  resourceReferences:
  - type: ImplicitNamespacedReference
    referringResource: {group: config.openshift.io, version: v1, resource: ingresses, name: cluster}
    implicitNamespacedReference: {group: "", version: v1, resource: configmaps, namespace: a, nameJSONPath: '$.spec.componentRoutes[?(@.name == "r" && @.namespace == "a")].secret.name'}
`), []byte(mustGather["cluster-scoped-resources/config.openshift.io/ingresses.yaml"]))
	f.Add([]byte(`applyConfigurationResources:
  exactResources: [{group: config.openshift.io, version: v1, resource: ingresses, name: cluster}]
  labelSelectedResources: [{group: "", version: v1, resource: configmaps, labelSelector: {matchLabels: {app: x}}}]
`), []byte(`apiVersion: config.openshift.io/v1
kind: IngressList
items:
- {apiVersion: config.openshift.io/v1, kind: Ingress, metadata: {name: cluster}, spec: {componentRoutes: [{secret: {name: 7}}, {secret: {name: [a]}}]}}
`))
	f.Fuzz(func(t *testing.T, resources, ingresses []byte) {
		declared, err := contract.ParseInputResources(resources)
		if err != nil {
			return
		}
		dir := contracttest.TempTree(t, map[string]string{
			"cluster-scoped-resources/config.openshift.io/ingresses.yaml": string(ingresses),
			"namespaces/a/core/configmaps.yaml":                           mustGather["namespaces/a/core/configmaps.yaml"],
		})
		in, err := contract.ReadInputDir(dir, contract.ReadOptions{})
		if err != nil {
			return
		}
		lists, err := prune.Prune(in, declared.ApplyConfigurationResources)
		if err != nil {
			return
		}
		for i := range lists {
			if _, err := lists[i].Marshal(); err != nil {
				t.Fatalf("%s: %v", lists[i].Path, err)
			}
		}
	})
}
