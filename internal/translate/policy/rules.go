package policy

// RuleVolumeDataSource rejects, on the management cluster, a PersistentVolumeClaim (alone,
// in a StatefulSet's volumeClaimTemplates or in a generic ephemeral volume) whose
// spec.dataSource or spec.dataSourceRef would clone a volume that is not one of the
// operator's simulated namespace: a source in another namespace, or of a kind whose name the
// engine cannot map (a VolumeSnapshot, a populator's object), would name the hosted control
// plane's own volumes (etcd's). A source the reference table followed names the claim's own
// simulated namespace.
const RuleVolumeDataSource = "policy/volume-data-source"

// Rule names of the checks on the fields that say what and whose an object is.
const (
	// RuleIdentityFields rejects objects whose apiVersion, kind, metadata.name,
	// metadata.namespace, metadata.generateName or metadata.ownerReferences a transform
	// changed: the plan states the target from the identity the engine gave the object, so a
	// transform that changes it would write somewhere the plan does not say. The profile's
	// own drop-owner-references is the one transform that may remove ownerReferences.
	RuleIdentityFields = "policy/identity-fields"
	// RuleOwnerReferences rejects an object that would land on the shared management cluster
	// with ownerReferences: the operator's owners are its standalone objects, not the
	// management cluster's, and an owner there ties the object's lifetime to it (or, with
	// blockOwnerDeletion, the owner's to the object). The hypershift profile strips them
	// (drop-owner-references); without the profile they are refused. The management target
	// adds the HostedControlPlane's own at apply time.
	RuleOwnerReferences = "policy/owner-references"
)

// RuleServiceAccountToken names the rewriting and the refusals of Secrets of type
// kubernetes.io/service-account-token. The API server's token controller fills such a Secret
// with a token of the service account its kubernetes.io/service-account.name annotation names,
// in the Secret's namespace: written unrewritten in the hosted control plane's namespace, it
// would name one of the HCP's own accounts (the control-plane-operator's). The annotation
// follows the name mapping of the account in the Secret's standalone namespace, like a field
// reference, and the account must be the operator's own: written by the plan, or declared in
// its output-resources (or the configuration's supplement). A Secret naming any other account
// is refused. A patch that touches the type or the annotation is judged on the Secret it makes
// of the plan's earlier entry (the name it sets is not rewritten: it must be where one of the
// operator's accounts lands), and refused when the plan does not write the Secret earlier.
const RuleServiceAccountToken = "policy/service-account-token"
