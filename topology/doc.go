// Package topology makes the one decision "which topology" once, from the configuration, and
// passes it on as a value: the clusters written to and read from (and the one topolayer runs
// on), the namespace a cluster is confined to, how standalone names map onto the clusters,
// the translation engine of an operator, where each input of an operator lives (for gather
// and the caches), the live targets of an operator's writes (namespace bounds, ownership
// rules, the HostedControlPlane owner) and where status objects go. No other package
// compares the topology type.
//
//	topo, err := topology.New(cfg) // cfg from config.Load
//	if err != nil { ... }
//	engine, err := topo.Engine("my-operator", declared)
//	plan := engine.Plan(out)
//	targets, err := topo.Targets(ctx, map[string]*rest.Config{"management": mgmt, "guest": guest},
//		topology.TargetOptions{Operator: "my-operator"})
//	results, err := apply.ApplyPlan(ctx, plan, targets)
package topology
