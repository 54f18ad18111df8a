// Command gen-default-discovery writes the default discovery documents that contract
// embeds: it starts a kube-apiserver (envtest, the version in go.mod), installs the CRDs an
// OpenShift payload ships (from the openshift/api module), and saves what the server answers
// to aggregated discovery requests for /api and /apis, as YAML.
//
//	KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh) go -C hack run ./gen-default-discovery -to $PWD/contract/defaultdiscovery
package main
