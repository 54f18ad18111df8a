// Package parity compares the standalone and the hosted placement of one operator's
// outputs, object by object, and attributes every difference to the rule that made it.
//
// Both sides are final states: FinalState folds the apply entries of a plans.Plan into
// one Object per target object (the state the mutations establish from nothing). Objects
// are matched by their standalone identity. Each difference between the two objects is
// attributed with what the hosted engine recorded while it worked (plans.Entry.Changes:
// references rewritten by the reference table or an event's involvedObject, identity
// changed by the name mapping, identity annotations recorded, each transform's changes), and
// with the entry's placement and disposition. Nothing of the engine is run again: the
// recorded changes are applied to the standalone object, and a difference they do not
// reproduce is CauseUnexplained; Report.Err then fails. On a live hosted object, the
// applier's ownerReference to the HostedControlPlane stands for the owner annotation.
//
// Each object gets an Outcome (identical, renamed only, transformed, absorbed, dropped,
// rejected, unexplained); topolayer's bookkeeping (identity annotations, the operator label,
// the HostedControlPlane owner) does not make an object less than identical. The package
// is pure: no I/O beyond the writers it is given, no clock.
//
// Compare builds a report from two plans (what `topolayer parity` does); CompareObjects
// from two sets of final objects and the hosted plan's entries (a live demo, whose objects
// come from the clusters):
//
//	s := translate.Standalone("my-operator", declared).Plan(out)
//	he, _ := topology.Engine(cfg, "my-operator", declared)
//	report, _ := parity.Compare(s, he.Plan(out), parity.OptionsFor(he))
//	report.WriteTable(os.Stdout) // ends with "parity: 12 objects: 2 identical, ..."
//	if err := report.Err(); err != nil { /* some difference is unexplained */ }
package parity
