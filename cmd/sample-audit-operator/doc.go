// Command sample-audit-operator is the smallest operator written with topolayer's
// sdk library: it reads the cluster's audit profile (openshift-config/audit-policy,
// key policy) and the sample settings' override (openshift-config/sample-settings, key
// auditPolicy), writes the sample operand's audit configuration
// (openshift-sample-audit/audit-config, its namespace created when missing) and a ClusterRole to read it, and reports on its
// ClusterOperator. Its logic lives in sdk/samples/sampleaudit.
//
//	sample-audit-operator apply-configuration --input-dir DIR --output-dir DIR [--now RFC3339]
package main
