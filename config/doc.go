// Package config reads topolayer's one configuration file, a TopologyConfig
// (apiVersion topolayer.dev/v1alpha1): the topology, standalone or hosted, and what each
// needs. Load decodes strictly (unknown fields are errors), fills defaults, and validates,
// naming the field path of every problem.
//
//	cfg, err := config.Load("examples/standalone.yaml")
//	// cfg.Topology.Type == config.Standalone
package config
