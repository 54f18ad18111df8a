// Package openshiftapi finds the CRD manifests of the github.com/openshift/api module that
// topolayer was built with, so that tests, the dev environment and the shadow-CRD generator
// install the same OpenShift APIs the code was compiled against. Nothing is copied into this
// repository: the manifests are read from the Go module cache (and downloaded through the
// module proxy, with `go mod download`, when the cache lacks them).
//
//	files, err := openshiftapi.PayloadCRDFiles() // the CRDs an OpenShift payload installs
//	env := &envtest.Environment{CRDInstallOptions: envtest.CRDInstallOptions{Paths: files}}
package openshiftapi
