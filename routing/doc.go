// Package routing decides where each mutation goes: given its class (Configuration,
// Management, UserWorkload) and its standalone identity, a Router answers with a target
// cluster, a disposition (apply, absorbed, dropped, rejected) and the name of the rule that
// decided. It does not rename anything (package namespaces does) and does no I/O.
//
//	d := routing.Standalone().Route(routing.Object{Class: contract.ClassManagement, Identity: id})
//	// d.Cluster == "cluster", d.Disposition == routing.Apply, d.Rule == "standalone"
package routing
