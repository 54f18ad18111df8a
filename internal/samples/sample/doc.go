// Package sample is the sample operator, written with controller-runtime and run under the
// MOM contract by sdk. It is small on purpose, but shaped like a real OpenShift
// operator, so that every placement rule of topolayer has something to act on.
//
// It reads its cluster-scoped Sample samples.operator.topolayer.dev/v1alpha1 `cluster`
// (spec.managementState; kept unstructured, its CRD ships in sdk/samples/crds)
// and the ConfigMap openshift-config/sample-settings (keys replicas, default 1, and
// message), and has two controllers:
//
//   - sample-operator-Workload creates the Namespace openshift-sample when it is missing and
//     server-side applies the operand there: ServiceAccount, ConfigMap sample-config (the
//     message), Secret sample-token (a service account token), Role, RoleBinding, Service and
//     Deployment `sample` (SAMPLE_IMAGE running cmd/sample-operand, which writes the
//     ConfigMap sample-operand-status; mounting the ConfigMap and the Secret), all in class
//     Management, and the ClusterRole and ClusterRoleBinding system:openshift:sample in class
//     UserWorkload. It records DeploymentCreated or DeploymentUpdated events in
//     openshift-sample-operator.
//   - sample-operator-Status compares the Deployment with the desired replicas and reports
//     Available, Progressing and Degraded on the ClusterOperator `sample` (created when
//     missing) and, with status.observedReplicas, on the Sample, both by server-side apply of
//     the status subresource.
//
// Everything is deterministic: no random names, every timestamp from the run's clock.
//
//	op, err := sample.New(os.Getenv("SAMPLE_IMAGE"))
//	...
//	err = op.Run(ctx, "tests/defaults/input-dir", "/tmp/out", now, nil)
package sample
