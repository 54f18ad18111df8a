package policy

import (
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

// Rule names of the management cluster's allow-list.
const (
	// RuleManagementKind rejects an object placed on the shared management cluster whose
	// kind is not on the allow-list (Containment.Kinds, widened per operator by
	// Policy.Management.Kinds): what is not known safe there is refused, not what is known bad.
	RuleManagementKind = "policy/management-kind"
	// RuleManagementFields rejects an allowed kind whose fields reach beyond the HCP
	// namespace or the tenant's share: a Service that is not a ClusterIP one (externalIPs,
	// NodePort, LoadBalancer, ExternalName, a fixed cluster IP), a claim binding a named
	// volume, replicas over the bound, a pod that mounts a management API token, a pod that
	// mounts a volume source not known safe there (an inline CSI volume, a generic ephemeral
	// volume, a node's or a network's storage), a pod whose scratch volumes (emptyDir) are not
	// bounded (Containment.MaxScratch), a claim whose storage is not (Containment.MaxClaim).
	RuleManagementFields = "policy/management-fields"
	// RuleReservedLabels rejects an object that sets a label the environment's own selectors,
	// Services and NetworkPolicies use in the HCP namespace (Containment.Reserved), unless
	// the configuration lets the operator set that label (Policy.Management.Labels).
	RuleReservedLabels = "policy/reserved-labels"
	// RuleReadOnly rejects every write of an object the environment owns and the operator
	// may only read (Containment.ReadOnly: the existing objects namespaces.aliases map
	// standalone objects onto), a Delete or a status write included: an alias lets the
	// operator see HyperShift's object under its own name, never change or remove it.
	RuleReadOnly = "policy/read-only"
)

// Containment is the allow-list of the shared management cluster: what a translated
// operand may place in the HCP namespace. The hosted topology composes it (the environment
// knows its own labels); nil, as in the standalone topology, allows what the other checks
// allow.
type Containment struct {
	// Kinds are the kinds (group and resource, and a name where it matters) an object may be
	// of on the management cluster. Shadow kinds (namespaces.IsShadowGroup) are always allowed.
	Kinds []routing.Match
	// MaxReplicas bounds a workload's replicas (and a Job's parallelism).
	MaxReplicas int64
	// MaxScratch, when positive, bounds in bytes what a pod's scratch volumes may hold on its
	// node: every emptyDir of a pod on the management cluster must set a sizeLimit (the
	// kubelet evicts the pod whose volume grows past it), and the pod's limits together may
	// not exceed MaxScratch. Without it a pod could fill the disk (or, with medium Memory,
	// the memory) of a node other tenants' control planes share.
	MaxScratch int64
	// MaxClaim, when positive, bounds in bytes the storage one claim may ask of the
	// management cluster: a PersistentVolumeClaim's and each StatefulSet volume claim
	// template's resources.requests.storage (required) and resources.limits.storage. Without
	// it an operand could take the storage its tenants' control planes share.
	MaxClaim int64
	// Reserved are the labels the environment's selectors use: a key (any value) when Value
	// is "", else that key with that value. A label key ending in '/' reserves every key
	// with that prefix.
	Reserved []Label
	// Own are the labels the topology itself sets on what it places, which a reserved key
	// would otherwise refuse (a reserved value is refused all the same): a key with its
	// value, "" for any value.
	Own []Label
	// ReadOnly are the objects on the management cluster the operator reads under another
	// name (namespaces.aliases) and that the environment owns: any write of one is refused
	// (RuleReadOnly). Identities without version.
	ReadOnly []contract.Identity
	// RequestLabels and RequestAnnotations are the keys of an object's metadata that ask the
	// management cluster's own controllers to act for it (fill a CA bundle with the
	// management cluster's, sign a serving certificate): an object that carries one as it
	// will be written is refused (RuleManagementFields). The hypershift profile withholds
	// them from what it places; what still carries one is a patch that adds it, or an object
	// no profile changed.
	RequestLabels, RequestAnnotations []string
}

// Label is a label key and value; an empty value stands for any.
type Label struct {
	Key   string `json:"key"`
	Value string `json:"value,omitempty"`
}

// String prints the label as key=value, or key alone for any value.
func (l Label) String() string {
	if l.Value == "" {
		return l.Key
	}
	return l.Key + "=" + l.Value
}

// Matches reports whether label key=value is the label l stands for.
func (l Label) Matches(key, value string) bool {
	keyMatches := key == l.Key || strings.HasSuffix(l.Key, "/") && strings.HasPrefix(key, l.Key)
	return keyMatches && (l.Value == "" || l.Value == value)
}

// ManagementAllowance is how the configuration widens the allow-list for one operator
// (policy.operators[].management): the real operand that needs more names it, by kind, by
// label, by bound.
type ManagementAllowance struct {
	// Kinds are kinds the operator may place besides the allow-list's.
	Kinds []routing.Match `json:"kinds,omitempty"`
	// Labels are reserved labels the operator may set: its operand is the environment's own
	// component (the real CAO's oauth-openshift in place of HyperShift's).
	Labels []Label `json:"labels,omitempty"`
	// MaxReplicas, when set, replaces the allow-list's bound.
	MaxReplicas int64 `json:"maxReplicas,omitempty"`
	// MaxScratch, when set, replaces the allow-list's bound on a pod's scratch volumes
	// (Containment.MaxScratch).
	MaxScratch *resource.Quantity `json:"maxScratch,omitempty"`
	// MaxClaim, when set, replaces the allow-list's bound on one claim's storage
	// (Containment.MaxClaim).
	MaxClaim *resource.Quantity `json:"maxClaim,omitempty"`
}
