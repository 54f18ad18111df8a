package gather

import (
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
)

// Location is where gather looks for one input object.
type Location struct {
	// Cluster is the name of the cluster that holds it.
	Cluster string
	// Identity is the object's identity on Cluster.
	Identity contract.Identity
	// Absorbed is true for a Namespace that the management side absorbs into the hosted
	// control plane's namespace: it is not read but synthesized.
	Absorbed bool
	// Status, when set, is where the object's status is read: the operator writes the
	// status of an object whose spec its users edit at Cluster (a config.openshift.io
	// singleton of a hosted cluster). Where Cluster has no such object, the object is read
	// whole at Status.
	Status *Location
}

// Placement is what gather needs of a topology (topology.Topology implements it): the
// clusters it reads, how names map, where each input lives, and the HostedControlPlane
// projections.
type Placement interface {
	// Clusters are the clusters to read, by name.
	Clusters() []string
	// Home is the cluster that holds the HostedControlPlane.
	Home() string
	// Bound is the namespace a cluster's objects are confined to, "" when it is not.
	Bound(cluster string) string
	// Names maps standalone identities onto the clusters and back.
	Names() namespaces.Mapper
	// Locate says where the input with standalone identity id lives, given the operator's
	// output-resources (nil when it writes nothing).
	Locate(outputs *contract.OutputResources, id contract.Identity) (Location, error)
	// HostedControlPlane is the object the projections read, when the topology has one.
	HostedControlPlane() (contract.Identity, bool)
	// Projections fill declared config singletons from the HostedControlPlane.
	Projections() []Projection
}
