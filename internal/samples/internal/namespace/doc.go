// Package namespace makes sure the namespace an operator writes its operand into exists, the
// way the sample operators do it: read it, and create it only when it is missing (an operator
// does not apply a Namespace it merely writes into).
//
//	if err := namespace.Ensure(ctx, c, "openshift-sample"); err != nil {
//		return reconcile.Result{}, err
//	}
package namespace
