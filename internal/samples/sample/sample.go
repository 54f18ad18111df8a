package sample

import (
	"context"
	"fmt"
	"slices"

	configv1 "github.com/openshift/api/config/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/samples/crds"
	"github.com/topolayer/topolayer/sdk"
)

// Names the sample operator reads and writes.
const (
	// Name is the operator's name, its command and its events' source.
	Name = "sample-operator"
	// Version is the operator's version, reported on its ClusterOperator.
	Version = "0.1.0"
	// OperatorNamespace is where the operator runs and files its events.
	OperatorNamespace = "openshift-sample-operator"
	// OperandNamespace holds the operand.
	OperandNamespace = "openshift-sample"
	// OperandName names the operand's Deployment, ServiceAccount, Role, RoleBinding and Service.
	OperandName = "sample"
	// ConfigMapName is the operand's configuration, holding the message.
	ConfigMapName = "sample-config"
	// SecretName is the operand's service account token.
	SecretName = "sample-token"
	// OperandStatusName is the ConfigMap the operand (cmd/sample-operand) writes in its
	// namespace; its Role lets it write that one.
	OperandStatusName = "sample-operand-status"
	// OperandCommand is the operand's program in its image.
	OperandCommand = "sample-operand"
	// ClusterRoleName names the ClusterRole and ClusterRoleBinding of the operand.
	ClusterRoleName = "system:openshift:sample"
	// ClusterOperatorName is the operator's ClusterOperator.
	ClusterOperatorName = "sample"
	// SettingsNamespace and SettingsName are the administrator's settings ConfigMap, with the
	// keys replicas (default 1) and message.
	SettingsNamespace = "openshift-config"
	SettingsName      = "sample-settings"
	// ConfigName is the name of the operator's own singleton Sample.
	ConfigName = "cluster"
	// DefaultImage is the operand image when SAMPLE_IMAGE is not set.
	DefaultImage = "registry.example/sample:latest"
	// DefaultMessage is the operand's message when the settings have none.
	DefaultMessage = "hello from the sample operator"
)

// Controller names, as --controllers and controller-results.yaml spell them. Each is also
// its controller's field manager.
const (
	WorkloadController = "sample-operator-Workload"
	StatusController   = "sample-operator-Status"
)

// sampleGVK is the kind of the operator's own resource, samples.operator.topolayer.dev.
var sampleGVK = schema.GroupVersionKind{Group: "operator.topolayer.dev", Version: "v1alpha1", Kind: "Sample"}

// SampleGVK returns the kind of the sample operator's custom resource.
func SampleGVK() schema.GroupVersionKind { return sampleGVK }

// CRDName is the name of Sample's CustomResourceDefinition, shipped in
// sdk/samples/crds.
const CRDName = "samples.operator.topolayer.dev"

// New returns the sample operator. image is the operand image; "" means DefaultImage.
func New(image string) (*sdk.Operator, error) {
	if image == "" {
		image = DefaultImage
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := configv1.Install(scheme); err != nil {
		return nil, err
	}
	all, err := crds.CRDs()
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(all, func(c *apiextensionsv1.CustomResourceDefinition) bool { return c.Name == CRDName })
	if i < 0 {
		return nil, fmt.Errorf("the CRD %s is not in sdk/samples/crds", CRDName)
	}
	singleton := []reconcile.Request{{NamespacedName: client.ObjectKey{Name: ConfigName}}}
	return &sdk.Operator{
		Name:            Name,
		InputResources:  InputResources(),
		OutputResources: OutputResources(),
		Scheme:          scheme,
		CRDs:            all[i : i+1],
		Controllers: []sdk.Controller{
			{
				Name: WorkloadController,
				New: func(d sdk.Deps) (reconcile.Reconciler, error) {
					return &WorkloadReconciler{Client: d.Client, Recorder: d.LegacyRecorder, Image: image}, nil
				},
				Requests: singleton,
			},
			{
				Name: StatusController,
				New: func(d sdk.Deps) (reconcile.Reconciler, error) {
					return &StatusReconciler{Client: d.Client, Clock: d.Clock}, nil
				},
				Requests: singleton,
			},
		},
	}, nil
}

// Resources the operator reads and writes.
var (
	samples          = sampleGVK.GroupVersion().WithResource("samples")
	namespaces       = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMaps       = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secrets          = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	serviceAccounts  = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	services         = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	deployments      = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	roles            = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	roleBindings     = roles.GroupVersion().WithResource("rolebindings")
	clusterRoles     = roles.GroupVersion().WithResource("clusterroles")
	clusterRoleBinds = roles.GroupVersion().WithResource("clusterrolebindings")
	clusterOperators = configv1.GroupVersion.WithResource("clusteroperators")
)

// InputResources lists exactly what the controllers read.
func InputResources() contract.InputResources {
	return contract.InputResources{
		ApplyConfigurationResources: contract.ResourceList{
			ExactResources: []contract.ExactResourceID{
				sdk.Exact(samples, "", ConfigName),
				sdk.Exact(configMaps, SettingsNamespace, SettingsName),
				sdk.Exact(namespaces, "", OperandNamespace),
				sdk.Exact(deployments, OperandNamespace, OperandName),
				sdk.Exact(clusterOperators, "", ClusterOperatorName),
			},
		},
		OperandResources: contract.OperandResourceList{
			ManagementResources: contract.ResourceList{
				ExactResources: []contract.ExactResourceID{sdk.Exact(deployments, OperandNamespace, OperandName)},
			},
		},
	}
}

// OutputResources lists what the controllers write: the operand, its ClusterOperator, the
// Sample's status and events on the management side; cluster-wide RBAC where workloads run.
func OutputResources() contract.OutputResources {
	return contract.OutputResources{
		ManagementResources: contract.OutputResourceList{
			EventingNamespaces: []string{OperatorNamespace},
			ExactResources: []contract.ExactResourceID{
				sdk.Exact(namespaces, "", OperandNamespace),
				sdk.Exact(serviceAccounts, OperandNamespace, OperandName),
				sdk.Exact(configMaps, OperandNamespace, ConfigMapName),
				sdk.Exact(secrets, OperandNamespace, SecretName),
				sdk.Exact(roles, OperandNamespace, OperandName),
				sdk.Exact(roleBindings, OperandNamespace, OperandName),
				sdk.Exact(services, OperandNamespace, OperandName),
				sdk.Exact(deployments, OperandNamespace, OperandName),
				sdk.Exact(clusterOperators, "", ClusterOperatorName),
				sdk.Exact(samples, "", ConfigName),
			},
		},
		UserWorkloadResources: contract.OutputResourceList{
			ExactResources: []contract.ExactResourceID{
				sdk.Exact(clusterRoles, "", ClusterRoleName),
				sdk.Exact(clusterRoleBinds, "", ClusterRoleName),
			},
		},
	}
}

// getSample reads the operator's Sample; a missing Sample is an error, as the operator has
// nothing to act on.
func getSample(ctx context.Context, c client.Client) (*unstructured.Unstructured, error) {
	s := &unstructured.Unstructured{}
	s.SetGroupVersionKind(sampleGVK)
	if err := c.Get(ctx, client.ObjectKey{Name: ConfigName}, s); err != nil {
		return nil, err // names the Sample: samples.operator.topolayer.dev "cluster" not found
	}
	return s, nil
}

// managed reports whether the Sample asks the operator to manage the operand.
func managed(s *unstructured.Unstructured) bool {
	state, _, _ := unstructured.NestedString(s.Object, "spec", "managementState")
	return state == "" || state == "Managed"
}
