// Package manager is the multi-operator manager embedded in topolayer: it runs MOM contract
// operators when their inputs change and places their outputs in the topology.
//
// One set of informers (the controller-runtime caches of the clusters) covers the union of
// every operator's inputs, read where the topology keeps them (the HCP namespace of the
// management cluster, the guest cluster; or the one cluster). A change is mapped back to its
// standalone identity and, through mom/index, to the operators that read it; mom/scheduler
// decides when each runs (debounce, cooldown, budget, concurrency, backoff, hot loops, and
// the resync period of an operator that has one: Operator.Resync, trigger "resync"). A
// run gathers the inputs from the caches, runs the operator offline (mom/runner) — a binary
// over an input directory it writes and an output directory it reads, or an operator built
// with the SDK and linked into the process (LinkInProcess) over the gathered objects, in
// memory — translates its outputs (rejecting anything undeclared: then nothing is applied),
// applies the plan and records the result: a status ConfigMap per operator, Kubernetes events
// and Prometheus metrics.
//
// A run costs the API servers only what changes. The informers are opened once per
// resource and namespace that some input needs (NewCacheFunc), never for the status
// namespace. A plan entry whose object the informers hold and show unchanged sends no
// request (apply.Options.Cache); the others are read and written as package apply does (a
// dry-run only for a plan that writes more than one entry; no read before a server-side
// apply that changes what the target wrote last). The status object is written at once when
// a run ends otherwise than the record it holds, and, for runs that only changed objects,
// once the operator's runs are quiet (Options.StatusQuiet); events only when a run's outcome
// differs from the previous one.
//
// With the hypershift profile and a HostedControlPlane (topology.Topology.
// ReadsHostedControlPlane), the Manager reads the HostedControlPlane from the home cluster
// before the first plan and watches it: what the profile reads of it (availability policy,
// node selector, tolerations, labels, annotations, release image) is one value the runs plan
// with; when it changes, the operators' engines are built again with the new value and every
// operator runs (trigger "hosted-control-plane"). While it cannot be read (deleted, a field of
// the wrong type) runs fail and apply nothing, and their status objects say why.
//
// AddToManager adds it to a controller-runtime manager of the topology's home cluster (the
// control-plane-operator's manager in HyperShift, or topolayer run's own):
//
//	topo, err := topology.New(cfg)
//	if err != nil { ... }
//	m, err := manager.AddToManager(ctx, mgr, manager.EmbedOptions{
//		Topology: topo,
//		Clusters: map[string]*rest.Config{"guest": guestConfig}, // the clusters besides mgr's
//	})
//	if err != nil { ... } // m runs on the leader, with mgr
//
// An embedding that links operators built with the SDK runs them in memory:
//
//	ops := manager.OperatorsFromConfig(cfg, configDir)
//	err := manager.LinkInProcess(ops, map[string]manager.Linked{"sample-operator": sampleOp})
//	m, err := manager.AddToManager(ctx, mgr, manager.EmbedOptions{Topology: topo, Operators: ops})
package manager
