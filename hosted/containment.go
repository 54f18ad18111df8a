package hosted

import (
	"github.com/topolayer/topolayer/internal/translate/policy"
	"github.com/topolayer/topolayer/routing"
)

// DefaultMaxReplicas bounds the replicas of a translated workload in an HCP namespace:
// HyperShift runs its own API-critical components with at most 3 (HighlyAvailable).
const DefaultMaxReplicas = 3

// ControlPlaneComponents are the names of HyperShift's own control-plane components (its
// `ComponentName`s, read from openshift/hypershift at 3ee9615): the values of the `app` and
// LabelControlPlaneComponent labels its Services, PodDisruptionBudgets and NetworkPolicies
// select in an HCP namespace.
func ControlPlaneComponents() []string {
	return []string{
		"aws-cloud-controller-manager", "aws-node-termination-handler", "azure-cloud-controller-manager",
		"capi-provider", "catalog-operator", "certified-operators-catalog", "cloud-credential-operator",
		"cluster-api", "cluster-autoscaler", "cluster-image-registry-operator", "cluster-network-operator",
		"cluster-node-tuning-operator", "cluster-policy-controller", "cluster-storage-operator",
		"cluster-version-operator", "community-operators-catalog", "control-plane-operator",
		"control-plane-pki-operator", "csi-snapshot-controller-operator", "dns-operator",
		"endpoint-resolver", "etcd", "featuregate-generator", "gcp-cloud-controller-manager",
		"hosted-cluster-config-operator", "ignition-server", "ignition-server-proxy", "ingress-operator",
		"karpenter", "karpenter-operator", "konnectivity-agent", "kube-apiserver",
		"kube-controller-manager", "kube-scheduler", "kube-storage-version-migrator",
		"kubevirt-cloud-controller-manager", "kubevirt-csi-controller", "machine-approver",
		"metrics-proxy", "oauth-openshift", "olm-collect-profiles", "olm-operator",
		"openshift-apiserver", "openshift-controller-manager", "openshift-oauth-apiserver",
		"openshift-route-controller-manager", "openstack-cloud-controller-manager", "packageserver",
		"powervs-cloud-controller-manager", "redhat-operators-catalog", "router",
	}
}

// Containment returns the allow-list of an HCP namespace on a HyperShift management cluster:
// what a translated operand may place there (docs/security.md says why each entry is on it).
// Kinds: the objects a control-plane component is made of — its workload (Deployment,
// StatefulSet, Job, CronJob, a Pod), its configuration (ConfigMap, Secret), its identity
// (ServiceAccount, Role, RoleBinding), its Service, PodDisruptionBudget and NetworkPolicy
// (selectors scoped to its simulated namespace), a claim, a Lease, events, and the monitors
// that scrape it (ServiceMonitor, PodMonitor). Not on it: what reaches beyond the namespace
// or the tenant's share (Endpoints and EndpointSlices, Ingresses and Routes, ResourceQuotas
// and LimitRanges, DaemonSets, ReplicaSets, ReplicationControllers, PodTemplates,
// PrometheusRules, HostedControlPlanes and every other HyperShift kind). A PrometheusRule in
// the HCP namespace is evaluated by the management cluster's own Prometheus (HyperShift
// labels the namespace openshift.io/cluster-monitoring) over every tenant's series, and its
// alerts go to that cluster's Alertmanager: the configuration may allow an operator's,
// reviewed (policy.operators[].management.kinds). Labels: every hypershift.openshift.io/ key but those the hypershift
// profile sets itself, and HyperShift's component names as values of `app` and
// LabelControlPlaneComponent. Requests: the keys by which an object asks the management
// cluster's own controllers for its CAs (LabelInjectTrustedCABundle,
// ServiceCARequestAnnotations), which the hypershift profile withholds. Bounds: replicas
// (DefaultMaxReplicas), each pod's scratch volumes (DefaultMaxScratch) and each claim's
// storage (DefaultMaxClaim).
func Containment(hcpNamespace string) *policy.Containment {
	kind := func(group, resource string) routing.Match {
		return routing.Match{Group: &group, Resource: resource}
	}
	c := &policy.Containment{
		Kinds: []routing.Match{
			kind("", "configmaps"), kind("", "secrets"), kind("", "services"), kind("", "serviceaccounts"),
			kind("", "pods"), kind("", "persistentvolumeclaims"), kind("", "events"),
			kind("apps", "deployments"), kind("apps", "statefulsets"),
			kind("batch", "jobs"), kind("batch", "cronjobs"),
			kind("policy", "poddisruptionbudgets"),
			kind("networking.k8s.io", "networkpolicies"),
			kind("rbac.authorization.k8s.io", "roles"), kind("rbac.authorization.k8s.io", "rolebindings"),
			kind("coordination.k8s.io", "leases"),
			kind("events.k8s.io", "events"),
			kind("monitoring.coreos.com", "servicemonitors"), kind("monitoring.coreos.com", "podmonitors"),
		},
		MaxReplicas:        DefaultMaxReplicas,
		MaxScratch:         DefaultMaxScratch,
		MaxClaim:           DefaultMaxClaim,
		RequestLabels:      []string{LabelInjectTrustedCABundle},
		RequestAnnotations: ServiceCARequestAnnotations(),
		Reserved:           []policy.Label{{Key: "hypershift.openshift.io/"}},
		Own: []policy.Label{
			{Key: LabelHostedControlPlane, Value: hcpNamespace},
			{Key: LabelControlPlaneComponent},
			{Key: LabelManagedBy, Value: "control-plane-operator"},
			{Key: LabelRequestServingComponent, Value: "true"},
		},
	}
	for _, name := range ControlPlaneComponents() {
		c.Reserved = append(c.Reserved, policy.Label{Key: "app", Value: name}, policy.Label{Key: LabelControlPlaneComponent, Value: name})
	}
	return c
}
