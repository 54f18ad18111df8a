// Package clusteroperator reports an operator's status on its config.openshift.io/v1
// ClusterOperator, the way the sample operators do it: create the object when it is missing
// (as library-go's status controller does), then server-side apply its status.
//
//	err := clusteroperator.Apply(ctx, c, "sample", "sample-operator-Status", now, clusteroperator.Status{
//		Conditions: []clusteroperator.Condition{{Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue, Reason: "AsExpected"}},
//		Versions:   []configv1.OperandVersion{{Name: "operator", Version: "0.1.0"}},
//	})
package clusteroperator
