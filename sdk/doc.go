// Package sdk runs operators written with controller-runtime under the
// multi-operator-manager (MOM) contract, offline: an operator author declares what the
// operator reads and writes, lists its controllers as reconciler factories, and gets the
// contract's command line (Operator.Command), an in-process entry point over directories
// (Operator.Run), and one over objects in memory (Operator.ApplyObjects, and the runner
// Operator.InMemory that `topolayer run`'s manager uses for an operator linked into its
// process: manager.LinkInProcess). The outputs are the same either way (TestInMemoryEqualsExec
// runs the sample operators' tests both ways).
//
// An apply-configuration run:
//   - reads the must-gather-like input directory (contract.ReadInputDir) and loads its objects
//     into controller-runtime's fake client, one fresh client per controller, so each
//     controller sees the input and its own writes, never another controller's;
//   - runs each selected controller's reconciler over its requests, again while it asks to be
//     requeued and still makes new writes, up to MaxReconciles, under ControllerTimeout,
//     recovering panics;
//   - records every write the fake API server accepts, as the request the real client would
//     have sent: Create, Update, Patch (JSON, merge, strategic-merge), server-side Apply
//     (client.Apply, or Patch with client.Apply), Delete, and the same on the status
//     subresource (UpdateStatus, PatchStatus, ApplyStatus); other subresources and collection
//     deletes are refused, as the contract records none;
//   - records the reconcilers' events as Create requests of core/v1 Events in the operator's
//     eventing namespace, about the operator itself (see EventSource), named
//     deterministically from --now;
//   - files every write under each class whose output-resources match it, and an undeclared
//     write under Unspecified, failing the run (ErrUndeclared);
//   - writes the output directory (contract.WriteOutputDir) and controller-results.yaml, even
//     when the run fails.
//
// Reconcilers run unchanged: they see a client.Client, a recorder and a clock (Deps). What
// the package does not do: watches (nothing changes while a run lasts), owner-reference
// garbage collection, admission or validation beyond what the fake client does, and network
// access of any kind.
//
// A minimal operator:
//
//	op := &operator.Operator{
//		Name:            "demo-operator",
//		InputResources:  contract.InputResources{...},
//		OutputResources: contract.OutputResources{...},
//		Scheme:          scheme,
//		Controllers: []operator.Controller{{
//			Name: "demo-Config",
//			New: func(d operator.Deps) (reconcile.Reconciler, error) {
//				return &ConfigReconciler{Client: d.Client, Recorder: d.Recorder}, nil
//			},
//		}},
//	}
//	if err := op.Command().ExecuteContext(ctx); err != nil { ... }
//
// The sample operators under samples/ are complete examples.
package sdk
