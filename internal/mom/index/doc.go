// Package index answers two questions of the multi-operator manager about declarations:
// which operators read an object (so that a change runs exactly those), and which objects
// more than one operator writes (conflicts, declared at start-up or seen at run time).
//
// Identities are standalone: the manager maps an object seen on the management cluster
// back (translate.Inverse) before asking.
//
//	ix := index.New()
//	_ = ix.Add("sample-operator", sampleInputs)
//	_ = ix.Add("sample-audit-operator", auditInputs)
//	ops := ix.Interested(contract.Identity{Resource: "configmaps", Namespace: "openshift-config", Name: "audit-policy"}, nil)
//	// ops == ["sample-audit-operator"]
package index
