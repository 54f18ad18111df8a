// Package hosted is the HyperShift topology: Configuration and Management outputs land in the
// hosted control plane's (HCP) namespace on the management cluster, renamed into simulated
// namespaces, with cluster-scoped kinds turned into namespaced shadow kinds; UserWorkload
// outputs land in the guest cluster unchanged. Engine builds the translation engine of a
// hosted configuration.
//
//	cfg, _ := config.Load("examples/hosted.yaml")
//	engine, _ := hosted.Engine(cfg, "cluster-authentication-operator", declared)
//	plan := engine.Plan(outputDir)
package hosted
