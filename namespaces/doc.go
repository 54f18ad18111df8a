// Package namespaces maps identities between the standalone form an operator writes and the
// form they take on a target cluster. In the standalone topology that is the identity
// (Identity). In the hosted (HyperShift) topology, Hosted keeps UserWorkload objects as they
// are on the guest cluster and simulates namespaces on the management cluster: every
// Configuration and Management object lands in the hosted control plane's namespace H.
//
// On the management cluster, Hosted applies these rules, first match wins:
//
//   - aliases: a configured standalone object maps onto an existing object in H;
//   - a Namespace is absorbed: it maps to H itself, for every standalone namespace, so it
//     inverts only through annotations;
//   - a ClusterRole or ClusterRoleBinding becomes a Role or RoleBinding in H named
//     "--<name>": nothing cluster-wide is ever created;
//   - any other cluster-scoped object becomes its namespaced shadow in H: group
//     ShadowGroup(group), same resource, same name;
//   - a namespaced object (ns, name) becomes (H, encode(ns, name)), same group and resource;
//     a generateName becomes encode(ns, generateName).
//
// # The name encoding
//
// encode(ns, name) has two forms. The readable form is "<ns>--<name>", used when ns contains
// no "--" and the result is a valid name for the kind (see NameValidator). Otherwise the
// hashed form is used: the lower-cased ns-name with every other character replaced by '-',
// runs of '-' collapsed and the result trimmed and truncated to fit, then '-' and the first
// 16 hex digits of SHA-256 over ns + "/" + name. A generateName must leave room for the 5
// characters the API server appends and is never longer than the 58 characters the server
// keeps, so a name generated from a readable generateName is itself a readable name.
//
// The encoding is injective. A readable name always contains "--", and splitting it at the
// first "--" gives back ns and name, because a namespace is a DNS label (it contains no "--"
// and does not end in '-') or, for cluster RBAC, empty (which no namespaced object has). A
// hashed name never contains "--". The two forms never collide; within the hashed form the
// hash of ns + "/" + name separates objects, up to collisions of 64 bits of SHA-256. Shadows
// live in groups no standalone object uses, and an alias name may neither contain "--" nor
// look like a hashed name.
//
// # Annotations
//
// A readable name, a shadow and an alias invert from the name alone; a hashed name and the
// absorbed Namespace do not (ErrNeedsAnnotations). Every object topolayer writes on a hosted
// target carries its standalone identity (SourceAnnotations); ToSource reads it as the source
// of truth and checks it against the name (ErrIdentityMismatch).
//
// The package maps identities only: it does no I/O and does not rewrite the references
// inside objects (package translate does, through a Mapper).
//
//	h := namespaces.Hosted{Namespace: "clusters-example"}
//	t, _ := h.ToTarget(routing.ClusterManagement, contract.Identity{
//		Version: "v1", Resource: "configmaps", Namespace: "openshift-authentication", Name: "audit"})
//	// t is configmaps clusters-example/openshift-authentication--audit
//	src, _ := h.ToSource(routing.ClusterManagement, t, nil) // the configmap again
package namespaces
