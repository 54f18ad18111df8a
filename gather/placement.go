package gather

import (
	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// Location is where gather looks for one input object.
type Location struct {
	// Cluster is routing.ClusterStandalone, routing.ClusterManagement or routing.ClusterGuest.
	Cluster string
	// Identity is the object's identity on Cluster.
	Identity contract.Identity
	// Absorbed is true for a Namespace that the management side absorbs into the hosted
	// control plane's namespace: it is not read but synthesized.
	Absorbed bool
}

// Place decides where an input with standalone identity id lives. Inputs have no class, so
// the rule is:
//
//   - standalone: the one cluster, unchanged;
//   - hosted: the management cluster, at names.ToTarget(management, id), when both
//     (1) the routing table places id, as class Management, on the management cluster
//     (cfg.RoutingTable().Route(routing.Object{Class: Management, Identity: id})), and
//     (2) the operator itself writes id there: outputs declares it as a Management or
//     Configuration output;
//   - otherwise the guest cluster, unchanged.
//
// A Namespace placed on the management cluster is absorbed (Location.Absorbed). outputs may
// be nil: then every input of a hosted topology is read from the guest.
func Place(cfg *config.TopologyConfig, names namespaces.Mapper, outputs *contract.OutputResources, id contract.Identity) (Location, error) {
	if cfg.Topology.Type != config.Hosted {
		return Location{Cluster: routing.ClusterStandalone, Identity: id}, nil
	}
	guest := Location{Cluster: routing.ClusterGuest, Identity: id}
	if outputs == nil {
		return guest, nil
	}
	written := outputs.ManagementResources.Matches(id) || outputs.ConfigurationResources.Matches(id)
	if !written {
		return guest, nil
	}
	d := cfg.RoutingTable().Route(routing.Object{Class: contract.ClassManagement, Identity: id})
	if d.Cluster != routing.ClusterManagement { // Route clears the cluster of dropped and rejected
		return guest, nil
	}
	t, err := names.ToTarget(routing.ClusterManagement, id)
	if err != nil {
		return Location{}, err
	}
	return Location{Cluster: routing.ClusterManagement, Identity: t, Absorbed: d.Disposition == routing.Absorbed}, nil
}
