// Package gather reads what an operator declares it reads (the applyConfigurationResources
// of its input-resources: exact, label-selected and ImplicitNamespacedReference references;
// generated-name entries are skipped) from where the topology keeps it, and returns it in the
// standalone form of a MOM input directory (write it with contract.WriteInputDir).
//
// Where an input lives is the topology's decision (Options.Placement, a topology.Topology):
// standalone, on the one cluster. Hosted, on the guest under its own identity, unless the
// operator itself writes it as a Management or Configuration output and the routing table
// places it, as class Management, on the management cluster: then at its name in the hosted
// control plane's namespace.
//
// Objects read from the management cluster are mapped back with translate.Inverse (names,
// namespaces, aliases, shadow kinds, references). Every object loses the server-set metadata
// a must-gather does not keep (uid, managedFields, selfLink) but keeps its resourceVersion,
// generation and creationTimestamp (an operator hashes resourceVersions to roll the pods
// that mount what changed), loses the HostedControlPlane ownerReference and topolayer's
// annotations and label; status is kept.
// Namespaces absorbed on the management side are synthesized, and the Projections fill config
// singletons the guest lacks from the HostedControlPlane.
//
//	res, err := gather.Gather(ctx, gather.Options{
//		Placement: topo, Inputs: inputs, Outputs: outputs, // topo, _ := topology.New(cfg)
//		Clusters: map[string]*rest.Config{"management": mgmt, "guest": guest},
//	})
//	if err != nil { ... }
//	err = contract.WriteInputDir(dir, res.Objects)
package gather
