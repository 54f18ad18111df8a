// Package hosted holds what is HyperShift's own in the hosted topology, in one place:
//   - its vocabulary: the HostedControlPlane's resource and kind, the labels, taints,
//     priority class and pull secret of what runs in an HCP namespace, and the
//     ownerReference to the HostedControlPlane (ResolveHostedControlPlane);
//   - the hypershift transform profile (HyperShiftProfile): the generic opinions of
//     HyperShift's component framework that a standalone workload needs to run in a hosted
//     control plane, as transform.Transform values the topology puts at the end of the
//     hosted stage list;
//   - guest identity's kubeconfig writer and refresher (hosted/guestidentity);
//   - the comparison of what topolayer places with HyperShift's own rendering of the same
//     operand, leaf by leaf, each difference named by a committed reason or unexplained
//     (internal/fixtureparity, `topolayer parity --hypershift-fixtures`);
//   - the shadow CRDs of cluster-scoped Configuration and Management kinds (hosted/shadow)
//     and the openshift/api manifests they are made from (hosted/openshiftapi).
//
// The placement itself (the management cluster confined to the hosted control plane's
// namespace, simulated namespaces, the guest) is a topology.Topology; this package's tests
// plan the real operator outputs of the corpus in it.
//
//	transforms, _ := hosted.Profile(hosted.ProfileHyperShift, hosted.ProfileOptions{}) // or with the HostedControlPlane
//	engine := translate.Engine{Stages: translate.HostedStages(transforms...) /* , ... */}
//	owner, _ := hosted.ResolveHostedControlPlane(ctx, managementConfig, "clusters-example", "example")
package hosted
