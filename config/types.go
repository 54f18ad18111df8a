package config

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/topolayer/topolayer/hosted"

	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/routing"
)

// APIVersion and Kind identify a topolayer configuration file.
const (
	APIVersion = "topolayer.dev/v1alpha1"
	Kind       = "TopologyConfig"
)

// TopologyType chooses where an operator's outputs land.
type TopologyType string

const (
	// Standalone places every class on one cluster, unchanged: the identity placement.
	Standalone TopologyType = "Standalone"
	// Hosted places Configuration and Management in the hosted control plane's namespace on
	// the management cluster and UserWorkload in the guest cluster.
	Hosted TopologyType = "Hosted"
)

// TopologyConfig is the one configuration file of topolayer. Its smallest forms are
//
//	apiVersion: topolayer.dev/v1alpha1
//	kind: TopologyConfig
//	topology: {type: Standalone}
//
// and
//
//	apiVersion: topolayer.dev/v1alpha1
//	kind: TopologyConfig
//	topology:
//	  type: Hosted
//	  hosted: {namespace: clusters-example, hostedControlPlane: example}
//
// Everything else has defaults.
type TopologyConfig struct {
	// APIVersion must be topolayer.dev/v1alpha1.
	APIVersion string `json:"apiVersion"`
	// Kind must be TopologyConfig.
	Kind string `json:"kind"`
	// Topology chooses the placement.
	Topology Topology `json:"topology"`
	// Namespaces tunes the naming of objects on the management cluster (hosted only).
	Namespaces Namespaces `json:"namespaces,omitzero"`
	// Routing adds rules to the topology's built-in ones.
	Routing Routing `json:"routing,omitzero"`
	// Transforms chooses the built-in transform profiles and adds patches.
	Transforms Transforms `json:"transforms,omitzero"`
	// Gather configures how inputs are read back from the topology.
	Gather Gather `json:"gather,omitzero"`
	// Operators are the MOM contract operators that topolayer run runs.
	Operators []Operator `json:"operators,omitempty"`
	// Scheduler bounds when and how often the operators run.
	Scheduler Scheduler `json:"scheduler,omitzero"`
	// Manager configures the process of topolayer run.
	Manager Manager `json:"manager,omitzero"`
	// Policy bounds what the operators' outputs may grant or install: privileged objects
	// (CRDs, admission webhooks and policies, APIServices) and RBAC.
	Policy Policy `json:"policy,omitzero"`
}

// Topology chooses standalone passthrough or a hosted control plane.
type Topology struct {
	// Type is Standalone or Hosted. Default: Standalone.
	Type TopologyType `json:"type,omitempty"`
	// Hosted names the hosted control plane; required when Type is Hosted, forbidden otherwise.
	Hosted *HostedTopology `json:"hosted,omitempty"`
}

// HostedTopology names the hosted control plane whose namespace receives the Configuration
// and Management classes.
type HostedTopology struct {
	// Namespace is the HCP namespace on the management cluster, e.g. clusters-example.
	Namespace string `json:"namespace"`
	// HostedControlPlane is the name of the HostedControlPlane object in Namespace.
	HostedControlPlane string `json:"hostedControlPlane"`
	// GuestIdentity says how the operands placed in Namespace reach the guest as their
	// standalone service accounts (rule hosted/guest-identity).
	GuestIdentity GuestIdentity `json:"guestIdentity,omitzero"`
	// ManagementAssignsNoUIDs says the management cluster assigns no UIDs to pods (it has
	// no SecurityContextConstraints, unlike OpenShift): the hypershift profile then runs
	// every control-plane pod as user 1001 (hypershift/default-uid), as HyperShift does
	// there. Default false.
	ManagementAssignsNoUIDs bool `json:"managementAssignsNoUIDs,omitempty"`
	// HyperShift declares what HyperShift's components declare of themselves and an
	// operator's output does not say, for the hypershift profile's opinions that read it:
	// the release payload's images (hypershift/images-from-payload), by workload standalone
	// name the request-serving ones (hypershift/request-serving), those spread across zones
	// (hypershift/multi-zone-spread), the konnectivity sidecars (hypershift/konnectivity-proxy)
	// and the availability prober (hypershift/availability-prober). Default: none.
	HyperShift hosted.ComponentOptions `json:"hypershift,omitzero"`
	// ServiceCA names the CA bundle, in the HCP namespace, that the operands' ConfigMaps
	// asking OpenShift's service-ca operator for a service CA bundle (annotation
	// service.beta.openshift.io/inject-cabundle or service.alpha.openshift.io/inject-cabundle)
	// receive under service-ca.crt: the guest's service-ca operator does not reach the
	// management cluster, and the hypershift profile withholds the ask from the management
	// cluster's own (hypershift/withhold-management-ca-requests, which records it under
	// topolayer.dev/withheld). topolayer apply and each run of topolayer run fill them after
	// applying (package
	// hosted/serviceca). HyperShift's own oauth-openshift reads its master CA from
	// oauth-master-ca-bundle, key ca.crt. Default: none, and such ConfigMaps stay empty.
	ServiceCA *ServiceCA `json:"serviceCA,omitempty"`
}

// ServiceCA names a ConfigMap of the HCP namespace and its key holding a CA bundle.
type ServiceCA struct {
	// ConfigMap is the ConfigMap's name.
	ConfigMap string `json:"configMap"`
	// Key is the key of its data holding the bundle. Default ca.crt.
	Key string `json:"key,omitempty"`
}

// GuestIdentity configures the identity the operands placed on the management cluster act
// as on the guest: their standalone service account, through a kubeconfig Secret in the HCP
// namespace whose user is a bound token from the guest's TokenRequest API. The defaults are
// HyperShift's: the guest API server as the kube-apiserver Service of the HCP namespace,
// with the CA of its root-ca ConfigMap.
type GuestIdentity struct {
	// Server is the guest API server's address as the pods in the HCP namespace reach it.
	// Default https://kube-apiserver:6443.
	Server string `json:"server,omitempty"`
	// CAConfigMap is the ConfigMap of the HCP namespace holding the guest API server's CA
	// bundle, under CAKey. Default root-ca.
	CAConfigMap string `json:"caConfigMap,omitempty"`
	// CAKey is the key of CAConfigMap holding the CA bundle. Default ca.crt.
	CAKey string `json:"caKey,omitempty"`
	// TokenExpiration is the lifetime asked of each token (expirationSeconds); the guest
	// may shorten it, and topolayer run refreshes a token at 80% of the lifetime the guest
	// returned. At least 10m, the API server's minimum. Default 1h.
	TokenExpiration *metav1.Duration `json:"tokenExpiration,omitempty"`
	// ManagementAPI selects, as routing rules match, the pod-bearing objects whose pods need
	// the management API server, or their service accounts (resource serviceaccounts, which
	// holds for RBAC written in runs without the workload): they keep their renamed service
	// account's token, and its RBAC stays in the HCP namespace. Default: none.
	ManagementAPI []routing.Match `json:"managementAPI,omitempty"`
	// KubeconfigFields name the operands' config files that say which kubeconfig the
	// operand reads (the OAuth server's kubeClientConfig.kubeConfig, in its cliconfig): the
	// field is set to the mounted guest kubeconfig, so the operand reaches the guest as its
	// guest identity. Each is a patch of the document in that data key (shown in plan and
	// parity as hosted/guest-identity/kubeconfig-field). Default: none.
	KubeconfigFields []KubeconfigField `json:"kubeconfigFields,omitempty"`
}

// KubeconfigField is a field, in a config document held in a ConfigMap's data key, naming
// the kubeconfig file an operand reads.
type KubeconfigField struct {
	// Namespace and Name are the ConfigMap's, in standalone form.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Key is the data key holding the config document (YAML or JSON).
	Key string `json:"key"`
	// Field is the dotted path of the field in the document, e.g. kubeClientConfig.kubeConfig.
	Field string `json:"field"`
}

// Defaults of GuestIdentity, HyperShift's.
const (
	DefaultGuestServer      = "https://kube-apiserver:6443"
	DefaultGuestCAConfigMap = "root-ca"
	DefaultGuestCAKey       = "ca.crt"
	DefaultTokenExpiration  = time.Hour
	// MinTokenExpiration is the least lifetime the TokenRequest API grants.
	MinTokenExpiration = 10 * time.Minute
)

// Namespaces tunes the simulated namespaces of the hosted topology.
type Namespaces struct {
	// Aliases map standalone objects onto existing objects of the HCP namespace with other
	// names, in both directions and in references.
	Aliases []Alias `json:"aliases,omitempty"`
}

// Alias maps one standalone object onto an existing object of the HCP namespace.
type Alias struct {
	// Group is the API group ("" for core).
	Group string `json:"group"`
	// Resource is the plural resource, e.g. secrets.
	Resource string `json:"resource"`
	// Namespace and Name are the standalone object's.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// HostedName is the name of the existing object in the HCP namespace.
	HostedName string `json:"hostedName"`
}

// Routing adds rules to the built-in ones.
type Routing struct {
	// Rules are added to the topology's built-in rules; the most specific rule wins.
	Rules []routing.Rule `json:"rules,omitempty"`
	// ClusterRBAC is Convert (default: to Roles and RoleBindings in the HCP namespace) or
	// Reject, for ClusterRoles and ClusterRoleBindings of the management-side classes.
	ClusterRBAC routing.ClusterRBACPolicy `json:"clusterRBAC,omitempty"`
}

// Transforms chooses built-in profiles and adds patches.
type Transforms struct {
	// Profiles are built-in transform sets; default ["hypershift"] for Hosted, none for
	// Standalone; [] turns them off.
	Profiles []string `json:"profiles"`
	// Disable names transforms of the profiles that do not run (e.g.
	// hypershift/image-pull-policy): each must be a transform of a configured profile
	// (hosted.ProfileTransformNames). Every transform of a profile runs by default.
	Disable []string `json:"disable,omitempty"`
	// Patches are strategic-merge or JSON 6902 patches for the objects they match.
	Patches []transform.Patch `json:"patches,omitempty"`
}
