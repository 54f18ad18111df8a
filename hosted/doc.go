// Package hosted holds what is HyperShift's own in the hosted topology: the shadow CRDs of
// cluster-scoped Configuration and Management kinds (hosted/shadow) and the openshift/api
// manifests they are made from (hosted/openshiftapi). The placement itself (the management
// cluster confined to the hosted control plane's namespace, simulated namespaces, the guest)
// is a topology.Topology; this package's tests plan the real operator outputs of the corpus
// in it.
//
//	cfg, _ := config.Load("examples/hosted.yaml")
//	engine, _ := topology.Engine(cfg, "cluster-authentication-operator", declared)
//	plan := engine.Plan(outputDir)
package hosted
