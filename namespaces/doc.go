// Package namespaces maps identities between the standalone form an operator writes and the
// form they take on a target cluster: in the hosted topology, simulated namespaces inside
// the hosted control plane's namespace; in the standalone topology, the identity. Every
// Mapper works in both directions, and its two directions are exact inverses.
//
//	id, _ := namespaces.Identity{}.ToTarget("cluster", standaloneID) // id == standaloneID
package namespaces
