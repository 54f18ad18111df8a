// Package translate is topolayer's engine: it takes an operator's standalone-form output
// directory and produces a Plan, an ordered list of target mutations, each with its source,
// the rule that placed it, the transforms applied to it and its disposition (apply,
// absorbed, dropped or rejected). Each applied Entry carries its final Object and the Changes
// made to it on the way (path, from, to, and the step, rule or transform that made it). It
// applies routing (package routing), name mapping (package namespaces), the reference table
// and the transforms to every mutation, and last, on the final objects, a Policy when the
// engine has one: privileged objects only where listed (RulePrivilegedObject), the default RBAC
// containment and the operator's ceiling (RuleRBACContainment, RuleRBACEscalation), Pod
// Security "restricted" on the management cluster (RulePodSecurity), service-account-token
// Secrets of the operator's own accounts (RuleServiceAccountToken), claims that clone only
// their own simulated namespace's volumes (RuleVolumeDataSource), identities no transform
// changed and no ownerReferences on the management cluster (RuleIdentityFields,
// RuleOwnerReferences). It is
// pure: no network, no files, no clock, no logging; the same input gives the same plan.
//
// In the hosted topology the objects of many standalone namespaces share the HCP namespace;
// each standalone namespace becomes a simulated namespace there, and the engine keeps it a
// namespace for what the operand relies on, not only for names (RuleSelectorScope):
// pods and pod templates carry namespaces.LabelNamespace, every selector that selected pods
// of its own namespace is narrowed by it (a NetworkPolicy's empty podSelector included, so a
// deny-all policy cannot reach the hosted control plane's own pods), and peers that named
// other simulated namespaces name them through the label. References outside the reference
// table follow too: the annotations of AnnotationReferences and Service DNS names inside
// ConfigMap and Secret data (ByAnnotationReferences, ByPayloadServiceDNS), and the status
// lists of StatusReferences (a ClusterOperator's relatedObjects, an operator CR's
// generations), in status writes too (ByStatusReferences); a reference to a ConfigMap every
// namespace has (EveryNamespaceConfigMaps) means the HCP namespace's own. What only a
// standalone cluster's nodes use (bound Pods, guard PDBs, library-go's static-pod revisions)
// is dropped (RuleDropStandaloneNode). CheckSimulatedNamespaces checks the result; Plan
// reports what it finds as warnings (RuleScopeCheck). docs/naming.md lists what was
// considered and left as it is.
//
// Workload selectors are immutable on the API server. A Deployment, StatefulSet, DaemonSet,
// ReplicaSet or Job that already exists in the HCP namespace with its unscoped selector (one
// applied before RuleSelectorScope) cannot take the scoped one: the plan shows the selector
// change, attributed to RuleSelectorScope, and the API server refuses the apply as a change
// to an immutable field. The object has to be deleted and created again; topolayer does not
// do that on its own.
//
//	out, _ := contract.ReadOutputDir("out", contract.ReadOptions{})
//	plan := translate.Standalone("my-operator", declared).Plan(out)
//	if len(plan.Rejected()) > 0 { /* apply nothing */ }
package translate
