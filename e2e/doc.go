// Package e2e holds topolayer's end-to-end tests, against real kube-apiservers and etcd: a
// hosted environment (a management and a guest server) and a standalone one (one server),
// started once by TestMain with package e2e/cluster, and the dev environment of
// `topolayer-devenv`, driven through the built binary.
//
// The servers' binaries come from $KUBEBUILDER_ASSETS, or else from hack/envtest-assets.sh,
// which builds them from the Go module proxy the first time (minutes) and caches them; `make
// test` sets KUBEBUILDER_ASSETS. Without binaries the tests fail, they do not skip.
//
// Each test creates what it needs in a namespace of its own; the HCP namespace
// (clusters-example) and its HostedControlPlane are shared and only read here.
//
//	KUBEBUILDER_ASSETS=$(hack/envtest-assets.sh) go test ./e2e/ -run TestRunHosted -v
package e2e
