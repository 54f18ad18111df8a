// Package plans is the data model of a translation: a Plan is the ordered list of an
// operator's mutations, each an Entry with its source, its Target (cluster and identity),
// the rule that placed it, its disposition and the Changes made to its body on the way, each
// naming the step that made it. WriteJSON writes a plan as plan.json, one entry at a time;
// later tools read that form back. Package translate makes plans; packages apply, parity and
// the CLI read them.
//
//	var p plans.Plan // from translate.Engine.Plan
//	if len(p.Rejected()) == 0 {
//		for cluster, muts := range p.ByCluster() { /* write muts to cluster */ }
//	}
//	_ = plans.WriteJSON(os.Stdout, &p)
package plans
