// Command sample-operator is a small operator written with controller-runtime that runs
// under the multi-operator-manager contract through topolayer's sdk library:
//
//	sample-operator input-resources
//	sample-operator output-resources
//	sample-operator apply-configuration --input-dir DIR --output-dir DIR [--now RFC3339] [--controllers ...]
//
// It reads openshift-config/sample-settings (replicas, message) and its Sample
// samples.operator.topolayer.dev/cluster, and runs the sample operand in openshift-sample.
// SAMPLE_IMAGE sets the operand image. Its logic lives in sdk/samples/sample.
package main
