package topology_test

import (
	"fmt"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/topology"
)

// Locate reads an input on the management cluster only when the operator writes it there.
func ExampleTopology_Locate() {
	cfg, _ := config.Parse([]byte("apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\ntopology:\n  type: Hosted\n  hosted: {namespace: clusters-example, hostedControlPlane: example}\n"))
	topo, _ := topology.New(cfg)
	cr := contract.Identity{Group: "operator.openshift.io", Version: "v1", Resource: "authentications", Name: "cluster"}
	infra := contract.Identity{Group: "config.openshift.io", Version: "v1", Resource: "infrastructures", Name: "cluster"}
	outputs := &contract.OutputResources{ManagementResources: contract.OutputResourceList{
		ExactResources: []contract.ExactResourceID{{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: cr.Group, Version: "v1", Resource: cr.Resource}, Name: cr.Name}},
	}}
	for _, id := range []contract.Identity{cr, infra} {
		loc, _ := topo.Locate(outputs, id)
		fmt.Printf("%s: %s %s\n", id, loc.Cluster, loc.Identity)
	}
	// Output:
	// authentications.operator.openshift.io cluster: management authentications.operator.openshift.io.shadow.topolayer.dev clusters-example/cluster
	// infrastructures.config.openshift.io cluster: guest infrastructures.config.openshift.io cluster
}
