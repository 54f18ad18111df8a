// Command topolayer places the outputs of multi-operator-manager contract operators where
// they belong in a standalone or hosted (HyperShift) topology. Run `topolayer --help`.
//
// The commands a newcomer meets first:
//
//	topolayer plan --config examples/hosted.yaml --from OUT --output-resources F --operator NAME
//	topolayer run --config examples/hosted-demo.yaml --management-kubeconfig M --guest-kubeconfig G
//	topolayer parity --config-standalone examples/standalone.yaml --config-hosted examples/hosted.yaml --from OUT --output-resources F --operator NAME
//
// docs/cli.md is the whole reference, generated from these commands.
package main
