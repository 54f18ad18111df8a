package fixtureparity_test

import (
	"fmt"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/fixtureparity"
	"github.com/topolayer/topolayer/internal/translate/parity"
)

// Compare HyperShift's Deployment with the one an operator wrote, placed in the HCP namespace.
func ExampleCompare() {
	fixture, _ := fixtureparity.ParseFixture("deployment.yaml", []byte(`
kind: Deployment
metadata: {name: oauth-openshift, resourceVersion: "1"}
spec: {replicas: 3, template: {spec: {containers: [{name: oauth-openshift, image: oauth-server}]}}}`))
	placed := parity.Object{
		Source:   contract.Identity{Group: "apps", Resource: "deployments", Namespace: "openshift-authentication", Name: "oauth-openshift"},
		Cluster:  "management",
		Identity: contract.Identity{Group: "apps", Resource: "deployments", Namespace: "hcp-namespace", Name: "openshift-authentication--oauth-openshift"},
		Body: map[string]any{"kind": "Deployment", "metadata": map[string]any{"name": "openshift-authentication--oauth-openshift"},
			"spec": map[string]any{"replicas": 3, "template": map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "oauth-openshift", "image": "quay.io/openshift/origin-oauth-server:v4.2", "workingDir": "/srv"},
			}}}}},
	}
	v := fixtureparity.Compare("default", []fixtureparity.Fixture{fixture}, []parity.Object{placed}, fixtureparity.DefaultPairs(), fixtureparity.DefaultReasons())
	for _, l := range v.Objects[0].Leaves {
		fmt.Printf("%-9s %s\n", l.Status, l.Path)
	}
	fmt.Println(v.Line())
	// Output:
	// equal     kind
	// different metadata.name
	// missing   metadata.resourceVersion
	// equal     spec.replicas
	// different spec.template.spec.containers[name=oauth-openshift].image
	// equal     spec.template.spec.containers[name=oauth-openshift].name
	// extra     spec.template.spec.containers[name=oauth-openshift].workingDir
	// fixture parity default: 6 fixture leaves, 7 in all: 3 equal, 3 explained, 1 unexplained (0 missing, 1 extra, 0 different); Deployment 50.0% equal
}
