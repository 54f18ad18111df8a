package references

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
)

// NameReference is one group of the reference table: the fields, in objects of other kinds,
// that hold the name of an object of Kind. It has the shape of one entry of kustomize's
// nameReference configuration (a referenced kind and its referrers' field specs).
//
// Each FieldSpec names a referrer's group, version and kind (empty means any) and, in
// kustomize's path syntax ("spec/template/spec/volumes/configMap/name"; lists are walked
// through without an index), the field that holds the reference. That field is one of:
//
//   - a string: the referenced object's name;
//   - a mapping: an object reference with a `name` and, optionally, a `namespace` (the
//     referenced object's namespace, when the field carries one), a `kind` and an `apiGroup`
//     or `apiVersion`; when those are present the mapping refers to Kind only if they match
//     (a RoleBinding subject of kind User, or a roleRef to a ClusterRole, is no reference to
//     a ServiceAccount or a Role);
//   - a list of either, each element being one reference.
//
// A `resourceNames` list in an RBAC policy rule names objects of Kind only when the same
// rule's `apiGroups` include Kind's group (or "*") and its `resources` include Resource
// (or "*", or a subresource of it such as "serviceaccounts/token").
//
// Label selectors are not name references and are not in the table: Service selectors,
// PodDisruptionBudget and NetworkPolicy pod and namespace selectors, workload
// spec.selector and ClusterRole aggregation rules match labels, which renaming does not
// change.
type NameReference struct {
	// Kind is the referenced kind.
	Kind schema.GroupKind `json:"kind"`
	// Resource is Kind's resource as RBAC rules spell it ("configmaps").
	Resource string `json:"resource"`
	// ClusterScoped is true when objects of Kind have no namespace: references to them
	// never carry one.
	ClusterScoped bool `json:"clusterScoped,omitempty"`
	// FieldSpecs are the fields that refer to objects of Kind, in table order.
	FieldSpecs []types.FieldSpec `json:"fieldSpecs"`
}

// ReferenceTable returns the table of name references topolayer rewrites, grouped by
// referenced kind. It covers kustomize's default nameReference configuration (v0.21.2)
// for every kind in it, except for the entries TestReferenceTableCoversKustomize lists
// as deliberately excluded, and adds what kustomize does not list: the same pod-spec
// fields for every pod-bearing kind (kustomize misses some for ReplicationController,
// ReplicaSet and PodTemplate), the deprecated spec.serviceAccount, the Secrets of CSI and
// in-tree volume sources, generic ephemeral volumes' storage classes, ServiceAccount
// secrets, PersistentVolume claimRef, the volumes PersistentVolumeClaims clone
// (spec.dataSource and spec.dataSourceRef, in claims, StatefulSet volumeClaimTemplates and
// generic ephemeral volumes), CustomResourceDefinition conversion webhooks,
// OpenShift Routes (spec.to, spec.alternateBackends, spec.tls.externalCertificate),
// RuntimeClass, MutatingAdmissionPolicy, and RBAC resourceNames for every referenced kind
// (kustomize has them for ConfigMap, Secret and PersistentVolume).
//
// The result is a fresh copy: callers may change it.
func ReferenceTable() []NameReference {
	out := make([]NameReference, len(referenceTable))
	for i, r := range referenceTable {
		r.FieldSpecs = slices.Clone(r.FieldSpecs)
		out[i] = r
	}
	return out
}

// API groups of the referring and referenced kinds.
const (
	refGroupCore          = ""
	refGroupApps          = "apps"
	refGroupBatch         = "batch"
	refGroupRBAC          = "rbac.authorization.k8s.io"
	refGroupNetworking    = "networking.k8s.io"
	refGroupAPIRegistry   = "apiregistration.k8s.io"
	refGroupAdmission     = "admissionregistration.k8s.io"
	refGroupAPIExtensions = "apiextensions.k8s.io"
	refGroupAutoscaling   = "autoscaling"
	refGroupStorage       = "storage.k8s.io"
	refGroupScheduling    = "scheduling.k8s.io"
	refGroupNode          = "node.k8s.io"
	refGroupRoute         = "route.openshift.io"
	refGroupMonitoring    = "monitoring.coreos.com"
)

// referenceTable is built once and never changed; ReferenceTable hands out copies.
var referenceTable = buildReferenceTable()

// refSpec is a FieldSpec of a referrer kind (any version).
func refSpec(group, kind, path string) types.FieldSpec {
	return types.FieldSpec{Gvk: resid.Gvk{Group: group, Kind: kind}, Path: path}
}

// refInPodSpecs returns the given pod-spec fields for every kind that carries a pod spec.
func refInPodSpecs(paths ...string) []types.FieldSpec {
	podSpecKinds := []struct{ group, kind, podSpec string }{
		{refGroupCore, "Pod", "spec"},
		{refGroupCore, "PodTemplate", "template/spec"},
		{refGroupCore, "ReplicationController", "spec/template/spec"},
		{refGroupApps, "Deployment", "spec/template/spec"},
		{refGroupApps, "ReplicaSet", "spec/template/spec"},
		{refGroupApps, "StatefulSet", "spec/template/spec"},
		{refGroupApps, "DaemonSet", "spec/template/spec"},
		{refGroupBatch, "Job", "spec/template/spec"},
		{refGroupBatch, "CronJob", "spec/jobTemplate/spec/template/spec"},
	}
	out := make([]types.FieldSpec, 0, len(podSpecKinds)*len(paths))
	for _, k := range podSpecKinds {
		for _, p := range paths {
			out = append(out, refSpec(k.group, k.kind, k.podSpec+"/"+p))
		}
	}
	return out
}

// refInContainers returns a container field for containers and init containers.
func refInContainers(path string) []string {
	return []string{"containers/" + path, "initContainers/" + path}
}

// refInMonitors returns the given fields of a scrape endpoint for the Prometheus operator's
// ServiceMonitor (spec.endpoints) and PodMonitor (spec.podMetricsEndpoints): the Secrets and
// ConfigMaps of the monitor's namespace its scrape authenticates or verifies with.
func refInMonitors(paths ...string) []types.FieldSpec {
	out := make([]types.FieldSpec, 0, 2*len(paths))
	for _, p := range paths {
		out = append(out, refSpec(refGroupMonitoring, "ServiceMonitor", "spec/endpoints/"+p), refSpec(refGroupMonitoring, "PodMonitor", "spec/podMetricsEndpoints/"+p))
	}
	return out
}

// refRBACRules are the resourceNames of Role and ClusterRole rules; see NameReference.
func refRBACRules() []types.FieldSpec {
	return []types.FieldSpec{
		refSpec(refGroupRBAC, "Role", "rules/resourceNames"),
		refSpec(refGroupRBAC, "ClusterRole", "rules/resourceNames"),
	}
}

// refScaleTarget is the HorizontalPodAutoscaler's scaleTargetRef, an object reference with a kind.
func refScaleTarget() []types.FieldSpec {
	return []types.FieldSpec{refSpec(refGroupAutoscaling, "HorizontalPodAutoscaler", "spec/scaleTargetRef")}
}

// refRow is the row of one kind: the fields that name its objects, then the resourceNames of
// RBAC rules, which may name an object of any kind of the table.
func refRow(group, kind, resource string, clusterScoped bool, specs ...[]types.FieldSpec) NameReference {
	return NameReference{
		Kind:          schema.GroupKind{Group: group, Kind: kind},
		Resource:      resource,
		ClusterScoped: clusterScoped,
		FieldSpecs:    append(slices.Concat(specs...), refRBACRules()...),
	}
}

const (
	refNamespaced    = false
	refClusterScoped = true
)

func buildReferenceTable() []NameReference {
	return []NameReference{
		refRow(refGroupCore, "ConfigMap", "configmaps", refNamespaced,
			refInPodSpecs(slices.Concat(
				[]string{"volumes/configMap/name", "volumes/projected/sources/configMap/name"},
				refInContainers("env/valueFrom/configMapKeyRef/name"),
				refInContainers("envFrom/configMapRef/name"),
			)...),
			[]types.FieldSpec{
				refSpec(refGroupCore, "Node", "spec/configSource/configMap"), // {namespace, name}
			},
			refInMonitors("oauth2/clientId/configMap/name", "tlsConfig/ca/configMap/name", "tlsConfig/cert/configMap/name"),
		),
		refRow(refGroupCore, "Secret", "secrets", refNamespaced,
			refInPodSpecs(slices.Concat(
				[]string{
					"volumes/secret/secretName",
					"volumes/projected/sources/secret/name",
					"imagePullSecrets/name",
					"volumes/csi/nodePublishSecretRef/name",
					"volumes/azureFile/secretName",
					"volumes/cephfs/secretRef/name",
					"volumes/flexVolume/secretRef/name",
					"volumes/iscsi/secretRef/name",
					"volumes/rbd/secretRef/name",
				},
				refInContainers("env/valueFrom/secretKeyRef/name"),
				refInContainers("envFrom/secretRef/name"),
			)...),
			[]types.FieldSpec{
				refSpec(refGroupNetworking, "Ingress", "spec/tls/secretName"),
				refSpec(refGroupCore, "ServiceAccount", "imagePullSecrets/name"),
				refSpec(refGroupCore, "ServiceAccount", "secrets"), // object references
				refSpec(refGroupRoute, "Route", "spec/tls/externalCertificate/name"),
			},
			refInMonitors("bearerTokenSecret/name", "basicAuth/username/name", "basicAuth/password/name", "authorization/credentials/name",
				"oauth2/clientSecret/name", "oauth2/clientId/secret/name", "tlsConfig/ca/secret/name", "tlsConfig/cert/secret/name", "tlsConfig/keySecret/name"),
		),
		refRow(refGroupCore, "ServiceAccount", "serviceaccounts", refNamespaced,
			refInPodSpecs("serviceAccountName", "serviceAccount"),
			[]types.FieldSpec{
				refSpec(refGroupRBAC, "RoleBinding", "subjects"), // {kind: ServiceAccount, namespace, name}
				refSpec(refGroupRBAC, "ClusterRoleBinding", "subjects"),
			},
		),
		refRow(refGroupRBAC, "Role", "roles", refNamespaced,
			[]types.FieldSpec{
				refSpec(refGroupRBAC, "RoleBinding", "roleRef"), // {apiGroup, kind: Role, name}
			},
		),
		refRow(refGroupRBAC, "ClusterRole", "clusterroles", refClusterScoped,
			[]types.FieldSpec{
				refSpec(refGroupRBAC, "RoleBinding", "roleRef"), // {apiGroup, kind: ClusterRole, name}
				refSpec(refGroupRBAC, "ClusterRoleBinding", "roleRef"),
			},
		),
		refRow(refGroupCore, "Service", "services", refNamespaced,
			[]types.FieldSpec{
				refSpec(refGroupApps, "StatefulSet", "spec/serviceName"),
				refSpec(refGroupNetworking, "Ingress", "spec/rules/http/paths/backend/service/name"),
				refSpec(refGroupNetworking, "Ingress", "spec/defaultBackend/service/name"),
				refSpec(refGroupNetworking, "Ingress", "spec/rules/http/paths/backend/serviceName"), // v1beta1
				refSpec(refGroupNetworking, "Ingress", "spec/backend/serviceName"),                  // v1beta1
				refSpec(refGroupAPIRegistry, "APIService", "spec/service"),                          // {namespace, name}
				refSpec(refGroupAdmission, "ValidatingWebhookConfiguration", "webhooks/clientConfig/service"),
				refSpec(refGroupAdmission, "MutatingWebhookConfiguration", "webhooks/clientConfig/service"),
				refSpec(refGroupAPIExtensions, "CustomResourceDefinition", "spec/conversion/webhook/clientConfig/service"),
				refSpec(refGroupRoute, "Route", "spec/to"), // {kind: Service, name}
				refSpec(refGroupRoute, "Route", "spec/alternateBackends"),
			},
		),
		refRow(refGroupCore, "PersistentVolumeClaim", "persistentvolumeclaims", refNamespaced,
			refInPodSpecs(
				"volumes/persistentVolumeClaim/claimName",
				"volumes/ephemeral/volumeClaimTemplate/spec/dataSource", // {kind, name}: the volume cloned
				"volumes/ephemeral/volumeClaimTemplate/spec/dataSourceRef",
			),
			[]types.FieldSpec{
				refSpec(refGroupCore, "PersistentVolume", "spec/claimRef"),           // {namespace, name}
				refSpec(refGroupCore, "PersistentVolumeClaim", "spec/dataSource"),    // {apiGroup, kind, name}
				refSpec(refGroupCore, "PersistentVolumeClaim", "spec/dataSourceRef"), // {apiGroup, kind, name, namespace}
				refSpec(refGroupApps, "StatefulSet", "spec/volumeClaimTemplates/spec/dataSource"),
				refSpec(refGroupApps, "StatefulSet", "spec/volumeClaimTemplates/spec/dataSourceRef"),
			},
		),
		refRow(refGroupCore, "PersistentVolume", "persistentvolumes", refClusterScoped,
			[]types.FieldSpec{
				refSpec(refGroupCore, "PersistentVolumeClaim", "spec/volumeName"),
			},
		),
		refRow(refGroupStorage, "StorageClass", "storageclasses", refClusterScoped,
			[]types.FieldSpec{
				refSpec(refGroupCore, "PersistentVolume", "spec/storageClassName"),
				refSpec(refGroupCore, "PersistentVolumeClaim", "spec/storageClassName"),
				refSpec(refGroupApps, "StatefulSet", "spec/volumeClaimTemplates/spec/storageClassName"),
			},
			refInPodSpecs("volumes/ephemeral/volumeClaimTemplate/spec/storageClassName"),
		),
		refRow(refGroupScheduling, "PriorityClass", "priorityclasses", refClusterScoped,
			refInPodSpecs("priorityClassName"),
		),
		refRow(refGroupNode, "RuntimeClass", "runtimeclasses", refClusterScoped,
			refInPodSpecs("runtimeClassName"),
		),
		refRow(refGroupNetworking, "IngressClass", "ingressclasses", refClusterScoped,
			[]types.FieldSpec{
				refSpec(refGroupNetworking, "Ingress", "spec/ingressClassName"),
			},
		),
		refRow(refGroupAdmission, "ValidatingAdmissionPolicy", "validatingadmissionpolicies", refClusterScoped,
			[]types.FieldSpec{
				refSpec(refGroupAdmission, "ValidatingAdmissionPolicyBinding", "spec/policyName"),
			},
		),
		refRow(refGroupAdmission, "MutatingAdmissionPolicy", "mutatingadmissionpolicies", refClusterScoped,
			[]types.FieldSpec{
				refSpec(refGroupAdmission, "MutatingAdmissionPolicyBinding", "spec/policyName"),
			},
		),
		refRow(refGroupApps, "Deployment", "deployments", refNamespaced, refScaleTarget()),
		refRow(refGroupApps, "ReplicaSet", "replicasets", refNamespaced, refScaleTarget()),
		refRow(refGroupApps, "StatefulSet", "statefulsets", refNamespaced, refScaleTarget()),
		refRow(refGroupCore, "ReplicationController", "replicationcontrollers", refNamespaced, refScaleTarget()),
	}
}
