// Command topolayer-devenv runs local API servers to try topolayer on: a hosted pair
// (management and guest) or one standalone cluster, real kube-apiservers and etcd on
// loopback, in the background, with a kubeconfig for each. Run `topolayer-devenv --help`.
//
//	topolayer-devenv up --dir /tmp/dev --config examples/hosted.yaml
//	topolayer-devenv down --dir /tmp/dev
//
// It is a development tool, built apart from topolayer so that the topolayer binary does not
// carry controller-runtime's envtest. docs/devenv.md is its reference, generated from these
// commands.
package main
