// Package nodemachinery recognizes, in an operator's output, what only has a meaning on a
// standalone cluster's own nodes (Rule): library-go's static-pod machinery (bound installer,
// pruner and guard pods, guard PDBs, static-pod revisions and the installer's identities).
// The hosted topology drops it: a hosted control plane runs its components as Deployments,
// with no control-plane nodes to install static pods on.
//
//	if why := nodemachinery.Why(w); why != "" {
//		// drop w under nodemachinery.Rule, saying why
//	}
package nodemachinery
