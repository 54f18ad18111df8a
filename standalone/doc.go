// Package standalone is the passthrough topology: every class of an operator's outputs lands
// on the one cluster with its identity unchanged. It is the same pipeline as the hosted
// topology with an identity placement, not a second implementation. Engine builds the
// translation engine of a standalone configuration.
//
//	cfg, _ := config.Load("examples/standalone.yaml")
//	engine, _ := standalone.Engine(cfg, "my-operator", declared)
//	plan := engine.Plan(outputDir) // every target equals its source
package standalone
