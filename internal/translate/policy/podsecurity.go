package policy

// RulePodSecurity rejects pods and pod templates placed on the management cluster that do not
// meet the Kubernetes Pod Security "restricted" level, as they will be written: the management
// cluster's nodes run every tenant's control plane.
const RulePodSecurity = "policy/pod-security"

// PodSecurityMode says how the pods an operator places on the management cluster are brought
// to the Pod Security "restricted" level.
type PodSecurityMode string

const (
	// PodSecurityStrip (the default) runs the profile's stripping transforms (Transform.Strips):
	// what a standalone workload only needs on a standalone node is dropped.
	PodSecurityStrip PodSecurityMode = "strip"
	// PodSecurityReject runs no stripping transform: a pod that would need stripping is
	// refused.
	PodSecurityReject PodSecurityMode = "reject"
)
