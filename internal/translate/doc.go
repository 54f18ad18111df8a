// Package translate is topolayer's engine: it takes an operator's standalone-form output
// directory and produces a Plan, an ordered list of target mutations, each with its source,
// the rule that placed it, the transforms applied to it and its disposition (apply, absorbed,
// dropped or rejected). Each applied plans.Entry carries its final Object and the Changes made
// to it on the way (path, from, to, and the step, rule or transform that made it). It applies
// routing (package routing), name mapping (package namespaces), the reference table and the
// transforms to every mutation, and last, on the final objects, a policy.Policy when the
// engine has one (package policy says what it allows and names its rules, package check
// enforces them): privileged objects only where listed (policy.RulePrivilegedObject), the
// default RBAC containment and the operator's ceiling (policy.RuleRBACContainment,
// policy.RuleRBACEscalation), Pod Security "restricted" on the management cluster
// (policy.RulePodSecurity), service-account-token Secrets of the operator's own accounts
// (policy.RuleServiceAccountToken), claims that clone only their own simulated namespace's
// volumes (policy.RuleVolumeDataSource), identities no transform changed and no
// ownerReferences on the management cluster (policy.RuleIdentityFields,
// policy.RuleOwnerReferences). It is pure: no network, no files, no clock, no logging; the
// same input gives the same plan. Engine.Declarations proposes, from a plan, the configuration
// snippet that would place what it refused for want of a declaration, for a person to review
// (never applied). Engine.Plan places, rewrites and checks the entries on every core (each
// reads the plan-wide placement and changes only its own entry); the plan does not depend on
// how many.
//
// In the hosted topology the objects of many standalone namespaces share the HCP namespace;
// each standalone namespace becomes a simulated namespace there, and the engine keeps it a
// namespace for what the operand relies on, not only for names (scope.Rule): pods and pod
// templates carry namespaces.LabelNamespace, every selector that selected pods of its own
// namespace is narrowed by it (a NetworkPolicy's empty podSelector included, so a deny-all
// policy cannot reach the hosted control plane's own pods), and peers that named other
// simulated namespaces name them through the label. References outside the reference table
// follow too: the annotations of references.AnnotationsOf and Service DNS names inside
// ConfigMap and Secret data (ByAnnotationReferences, ByPayloadServiceDNS; the tables are
// package references'), and the status lists of references.StatusLists (a ClusterOperator's
// relatedObjects, an operator CR's generations), in status writes too (ByStatusReferences); a
// reference to a ConfigMap every namespace has (references.InEveryNamespace) means the HCP
// namespace's own. What only a standalone cluster's nodes use (bound Pods, guard PDBs,
// library-go's static-pod revisions) is dropped (nodemachinery.Rule). scope.Check checks the
// result; Plan reports what it finds as warnings (scope.RuleCheck). docs/naming.md lists what
// was considered and left as it is.
//
// An operand placed on the management cluster acts on the guest, as its standalone service
// account (guestidentity.Rule, when Engine.GuestIdentity is set): for every pod-bearing object
// (Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, Pod) placed there, the
// service account its pods name (spec.serviceAccountName, default "default") is its identity
// on the guest. The pod template gets automountServiceAccountToken false (no token of the
// management API server), the Secret volume guestidentity.KubeconfigVolume of the kubeconfig
// Secret guestidentity.SecretName(namespace, account) mounted at
// guestidentity.KubeconfigMountPath in every container and init container, and KUBECONFIG
// naming the file; each change is recorded. The service account object the operator writes
// goes to the guest, under its standalone identity (so does a bare one when the operator
// writes none, and its namespace, plans.RuleGuestNamespace, when the guest may lack it); the
// pods still need a service account on the management cluster to run as, so the renamed one
// stays there too, a copy with automountServiceAccountToken false: two entries of one source,
// one per cluster, and a reference resolves to the one on the referrer's cluster. The Roles,
// RoleBindings, ClusterRoles and ClusterRoleBindings whose ServiceAccount subjects act on the
// guest land on the guest with them, where their subjects act. Every service account of a
// simulated namespace acts on the guest, in every plan: the operator may write an operand's
// RBAC in a run without the operand. An operand, or a service account, that
// GuestIdentity.ManagementAPI selects keeps its renamed service account, its token and its
// RBAC in the HCP namespace. Plan.GuestIdentities lists the identities; the kubeconfig Secrets
// hold tokens the guest issues, so package guestidentity writes them, not the plan.
//
// Workload selectors are immutable on the API server. A Deployment, StatefulSet, DaemonSet,
// ReplicaSet or Job that already exists in the HCP namespace with its unscoped selector (one
// applied before scope.Rule) cannot take the scoped one: the plan shows the selector change,
// attributed to scope.Rule, and the API server refuses the apply as a change to an immutable
// field. The object has to be deleted and created again; topolayer does not do that on its
// own.
//
// The contract cannot record the Delete of a namespaced object (spec/mom-format.md §2.5: the
// manifest client refuses it), so an operator that deletes a copy whose source is gone leaves
// only the refusal in its errors. The engine recovers each such Delete from
// controller-results.yaml and from the conditions the operator's status applies carry
// (recovery.Rule, Planner.AddControllerResults) and places it as a recorded Delete;
// Plan.LeftBehind reports what is left behind all the same.
//
// The engine reads each object as the reader parsed it (contract.Mutation.Object) and builds a
// YAML tree only for what it rewrites: the standalone topology writes most objects as the
// operator wrote them, bytes and all. A Planner plans a directory as a reader streams it
// (contract.WalkOutputDir): an entry no plan-wide stage reads is settled as soon as it is
// added, handed to the caller (who writes it) and its body dropped; with a spill
// (Planner.SpillTo, a temporary file) its plan.json form waits there, not in memory, and
// Planner.WritePlan writes plan.json reading it back, so `topolayer translate` holds the
// entries a plan-wide stage reads (RBAC, token Secrets), not the directory nor the plan.
// plans.WriteJSON writes a plan held in memory one entry at a time.
//
//	out, _ := contract.ReadOutputDir("out", contract.ReadOptions{})
//	plan := translate.Standalone("my-operator", declared).Plan(out)
//	if len(plan.Rejected()) > 0 { /* apply nothing */ }
package translate
