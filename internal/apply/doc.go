// Package apply writes a translated plan to live clusters.
//
// A Target is one place mutations land: a cluster, or one namespace of one (the hosted control
// plane's namespace on a management cluster). ClusterTarget is the Target over a real API
// server; it supports every action of the contract:
//
//   - Create is a POST. When the object already exists and is ours (the same standalone
//     identity annotations and operator label), the body is server-side applied with the
//     target's field manager instead, so re-creating converges. Objects that only have a
//     generateName are always POSTed.
//   - Update and UpdateStatus are a PUT of the object or its status subresource, with the
//     live object's resourceVersion.
//   - Apply and ApplyStatus are server-side apply PATCHes (application/apply-patch+yaml) with
//     the field manager and force flag of the options file (shadow objects get their status
//     through the status subresource this way).
//   - Patch and PatchStatus are JSON, merge or strategic-merge PATCHes; JSON patch bodies
//     may be YAML lists.
//   - Delete is a DELETE; an absent object is not an error.
//
// An object that already exists but carries another source identity or another operator's
// label is a conflict (*ConflictError): nothing is written. So is, on a target with
// Options.RequireOwnership, an object without any topolayer mark, unless the target adopts
// (Options.Adopt): such an object is then taken over in place (change "adopt"): the fields
// its previous managers (Adoption.FieldManagers) own move to the write's field manager by a
// managedFields patch (csaupgrade) sent just before the write, and the write adds the marks.
// An adoption costs one request more than a change: a GET, a dry-run, the managedFields
// patch and the write.
//
// A write that would not change the object is skipped, so re-applying a plan sends no
// mutating request: when the comparison of the body with the live object proves it
// (AppliedNoOp for server-side applies, UpdatedNoOp for PUTs, PatchedNoOp for JSON and merge
// patches), on the read alone; otherwise when the server's dry-run of the write is
// Equivalent to the live object. The comparison is semantic: a status condition whose
// status did not change keeps its live lastTransitionTime (meta.SetStatusCondition's rule)
// (CarryTransitionTimes, in the comparison and in the write), and lists the API treats as
// sets or maps (conditions by type, lists live's managedFields record by value or key) match
// in any order.
//
// A Create of a core Event that repeats one the same operator wrote in that namespace (the
// key of client-go's event correlator: source, involved object, type, reason, message) is
// folded into it, as a resident recorder does (change "fold": a PUT with count+1 and the
// new lastTimestamp), instead of creating one more Event each run; ApplyPlan drops the
// folds of a plan that changes nothing but Events (events.go says why).
//
// A target with Options.HostedControlPlane owns what it writes: every object of its namespace
// that it creates, updates or applies whole gets the ownerReference to the HostedControlPlane
// (not Events, not status writes, patches or deletions). The owner is the management target's
// property, not the plan's.
//
// A target with Options.Admission judges every Patch of an object by what it makes: the
// server is asked a dry-run of the patch (it applies it, whatever its spelling) before
// anything of the plan is written, even when the patch is the plan's only write, and the
// object it returns is handed to the Admission, which the topology composes from the
// operator's engine (translate.Engine.AdmitPatched). A refusal names its rule, the entry, the
// object and the field, and the plan fails validation with nothing written.
//
// ApplyPlan validates a whole plan (no rejected entry, a target for every cluster, a
// server-side dry-run of every mutation) before its first write, then applies it in order and
// stops at the first failure. DryRun reports what each entry would do and writes nothing.
// On a ClusterTarget, what validation learned of an entry (its parsed body, the live object,
// the dry-run's answer) is its write's, so each entry costs, for the whole apply:
//
//   - an existing object that the write would not change: nothing when the target's
//     Options.Cache holds the object and the comparison with the cached copy proves it; one
//     GET when the comparison with the live object proves it; a GET and a dry-run otherwise
//     (a strategic-merge patch);
//   - an object created or changed: a GET, a dry-run and the write;
//   - an entry that depends on an earlier one (its object or namespace is created by the
//     plan, or written before it): read again when it is written.
//
// Usage, for a hosted plan:
//
//	owner, err := hosted.ResolveHostedControlPlane(ctx, mgmtCfg, "clusters-example", "example")
//	if err != nil { ... }
//	mgmt, err := apply.NewClusterTarget("management", mgmtCfg, apply.Options{
//		Namespace:          "clusters-example",
//		Operator:           "cluster-authentication-operator",
//		HostedControlPlane: owner,
//		RequireOwnership:   true,
//	})
//	guest, err := apply.NewClusterTarget("guest", guestCfg, apply.Options{Operator: "cluster-authentication-operator"})
//	results, err := apply.ApplyPlan(ctx, plan, map[string]apply.Target{"management": mgmt, "guest": guest})
//
// With Options.Impersonate naming a service account, every request of the target is made as
// that account, so the target can write only what the account's RBAC allows.
package apply
