// Package crds holds the CustomResourceDefinitions of the sample operators, embedded, so
// that the dev environment and the end-to-end tests install them wherever they run:
//
//	crds, err := crds.CRDs()
//	// install them on the guest (hosted) or on the one cluster (standalone); their shadows
//	// on the management cluster.
package crds
