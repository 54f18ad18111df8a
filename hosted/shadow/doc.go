// Package shadow generates the shadow CustomResourceDefinitions that let a hosted control
// plane's namespace H on the management cluster hold the cluster-scoped objects of a
// management-side class: an operator's own CR, a ClusterOperator, a config.openshift.io
// singleton.
//
// A shadow CRD has the kind, names and schema of the original, but it is Namespaced and its
// group carries the suffix of namespaces.ShadowGroup, so
// authentications.operator.openshift.io/cluster on a standalone cluster becomes an
// Authentication named cluster in H, of the resource
// authentications.operator.openshift.io.shadow.topolayer.dev. The real API server then
// validates shadow objects, runs server-side apply and field managers, and serves the status
// subresource: nothing is emulated client-side.
//
// The package only builds, reads, writes and validates CRD manifests; it does not install
// them, and it does not map objects (package namespaces does).
//
//	crds, err := shadow.ReadCRDs(openshiftAPICRDFile) // a file or a directory of manifests
//	if err != nil { ... }
//	s, err := shadow.CRD(crds[0]) // errors unless crds[0] is cluster-scoped
//	if err != nil { ... }
//	if err := shadow.Validate(s); err != nil { ... } // what the API server checks of what a shadow changes
//	err = shadow.WriteCRD(dir, s) // dir/<plural>.<group>.shadow.topolayer.dev.yaml
//
// Built-in cluster-scoped kinds, which have no CRD to start from (core nodes,
// certificates.k8s.io certificatesigningrequests), get a schemaless shadow from GenericCRD.
package shadow
