// Package sampleaudit is the sample audit operator, the smallest operator written with
// sdk: one controller, sample-audit-operator-AuditConfig, reads the cluster's audit
// profile (openshift-config/audit-policy, key policy) and the sample operator's override
// (openshift-config/sample-settings, key auditPolicy), creates the Namespace
// openshift-sample-audit when it is missing, and server-side applies
//
//   - the ConfigMap openshift-sample-audit/audit-config (the profile and the audit.k8s.io/v1
//     Policy it amounts to), in class Management;
//   - the ClusterRole system:openshift:sample-audit, which may read it, in class UserWorkload;
//   - the status of its ClusterOperator sample-audit (created when missing), in class
//     Management.
//
// An unknown profile fails the controller with a message naming the ConfigMap and the key.
package sampleaudit
