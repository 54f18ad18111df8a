// Package check refuses what an operator may not write, on the objects as they will be
// written: after placement, renaming and every transform. A Checker holds the operator's
// policy (package policy), the management cluster's allow-list and what the engine knows of
// the operator; the engine hands it each planned write as a Write and runs its checks last:
// identity fields, volume data sources, privileged objects, the management cluster's kinds,
// fields and reserved labels, Pod Security "restricted", the accounts of service-account
// token Secrets, what a patch makes of the object it patches, RBAC containment and the RBAC
// ceiling, and the duplicate writes of one output. A refused write names its rule and why.
//
//	c := &check.Checker{Policy: p, Containment: allowList, Names: mapper}
//	c.Tokens(writes, written) // token Secrets' accounts, once every body is rewritten
//	for _, w := range writes {
//		c.Object(w) // refuses w (w.Reject) when its final object may not land
//	}
//	c.Plan(writes, written, check.WrittenRoles(writes))
package check
