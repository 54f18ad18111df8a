package sampleaudit

import (
	"context"
	"fmt"
	"slices"

	configv1 "github.com/openshift/api/config/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	coreac "k8s.io/client-go/applyconfigurations/core/v1"
	rbacac "k8s.io/client-go/applyconfigurations/rbac/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/samples/internal/clusteroperator"
	"github.com/topolayer/topolayer/internal/samples/internal/namespace"
	"github.com/topolayer/topolayer/sdk"
)

// Names the sample audit operator reads and writes.
const (
	// Name is the operator's name and command.
	Name = "sample-audit-operator"
	// Version is the operator's version, reported on its ClusterOperator.
	Version = "0.1.0"
	// Controller is the operator's only controller, and its field manager.
	Controller = "sample-audit-operator-AuditConfig"
	// ConfigNamespace holds the cluster's and the sample operator's settings.
	ConfigNamespace = "openshift-config"
	// PolicyName is the cluster's audit policy ConfigMap; its key policy names a profile.
	PolicyName = "audit-policy"
	// SettingsName is the sample operator's settings ConfigMap; its optional key auditPolicy
	// overrides the cluster's profile for the sample operand.
	SettingsName = "sample-settings"
	// AuditConfigNamespace and AuditConfigName are the ConfigMap the operator writes: the
	// profile and the audit.k8s.io/v1 Policy it amounts to. The operator creates the
	// namespace when it is missing.
	AuditConfigNamespace = "openshift-sample-audit"
	AuditConfigName      = "audit-config"
	// ClusterRoleName lets audit readers read the audit configuration.
	ClusterRoleName = "system:openshift:sample-audit"
	// ClusterOperatorName is the operator's ClusterOperator.
	ClusterOperatorName = "sample-audit"
	// DefaultProfile is the profile when neither ConfigMap names one.
	DefaultProfile = "Default"
)

// profiles are the audit profiles the operator knows, as OpenShift spells them.
var profiles = []string{"Default", "WriteRequestBodies", "AllRequestBodies", "None"}

// Profiles returns the audit profiles the operator accepts (a copy, the caller's to change).
func Profiles() []string { return slices.Clone(profiles) }

var (
	namespaces       = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMaps       = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	clusterRoles     = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	clusterOperators = configv1.GroupVersion.WithResource("clusteroperators")
)

// New returns the sample audit operator.
func New() (*sdk.Operator, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := configv1.Install(scheme); err != nil {
		return nil, err
	}
	return &sdk.Operator{
		Name: Name,
		InputResources: contract.InputResources{
			ApplyConfigurationResources: contract.ResourceList{ExactResources: []contract.ExactResourceID{
				sdk.Exact(configMaps, ConfigNamespace, PolicyName),
				sdk.Exact(configMaps, ConfigNamespace, SettingsName),
				sdk.Exact(clusterOperators, "", ClusterOperatorName),
				sdk.Exact(namespaces, "", AuditConfigNamespace),
			}},
		},
		OutputResources: contract.OutputResources{
			ManagementResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{
				sdk.Exact(namespaces, "", AuditConfigNamespace),
				sdk.Exact(configMaps, AuditConfigNamespace, AuditConfigName),
				sdk.Exact(clusterOperators, "", ClusterOperatorName),
			}},
			UserWorkloadResources: contract.OutputResourceList{ExactResources: []contract.ExactResourceID{
				sdk.Exact(clusterRoles, "", ClusterRoleName),
			}},
		},
		Scheme: scheme,
		Controllers: []sdk.Controller{{
			Name: Controller,
			New: func(d sdk.Deps) (reconcile.Reconciler, error) {
				return &AuditConfigReconciler{Client: d.Client, Clock: d.Clock}, nil
			},
		}},
	}, nil
}

// AuditConfigReconciler writes the audit configuration of the sample operand from the
// cluster's audit profile, or the sample settings' override, and reports on its
// ClusterOperator.
type AuditConfigReconciler struct {
	Client client.Client
	Clock  clock.PassiveClock
}

var _ reconcile.Reconciler = &AuditConfigReconciler{}

// Reconcile implements reconcile.Reconciler.
func (r *AuditConfigReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	profile, err := r.profile(ctx)
	if err != nil {
		return reconcile.Result{}, err
	}
	policy, err := Policy(profile)
	if err != nil {
		return reconcile.Result{}, err
	}
	if err := namespace.Ensure(ctx, r.Client, AuditConfigNamespace); err != nil {
		return reconcile.Result{}, err
	}
	writes := []runtime.ApplyConfiguration{
		coreac.ConfigMap(AuditConfigName, AuditConfigNamespace).WithData(map[string]string{"profile": profile, "policy.yaml": policy}),
		rbacac.ClusterRole(ClusterRoleName).WithRules(rbacac.PolicyRule().
			WithAPIGroups("").WithResources("configmaps").WithResourceNames(AuditConfigName).WithVerbs("get", "list", "watch")),
	}
	for _, ac := range writes {
		if err := r.Client.Apply(ctx, ac, client.FieldOwner(Controller), client.ForceOwnership); err != nil {
			return reconcile.Result{}, err
		}
	}
	msg := "audit profile " + profile
	return reconcile.Result{}, clusteroperator.Apply(ctx, r.Client, ClusterOperatorName, Controller, r.Clock.Now(), clusteroperator.Status{
		Conditions: []clusteroperator.Condition{
			{Type: configv1.OperatorAvailable, Status: configv1.ConditionTrue, Reason: "AsExpected", Message: msg},
			{Type: configv1.OperatorProgressing, Status: configv1.ConditionFalse, Reason: "AsExpected", Message: msg},
			{Type: configv1.OperatorDegraded, Status: configv1.ConditionFalse, Reason: "AsExpected", Message: "no problem observed"},
		},
		Versions: []configv1.OperandVersion{{Name: "operator", Version: Version}},
		RelatedObjects: []configv1.ObjectReference{
			{Group: "", Resource: "configmaps", Namespace: AuditConfigNamespace, Name: AuditConfigName},
		},
	})
}

// profile returns the sample settings' auditPolicy, else the cluster's policy, else
// DefaultProfile. Missing ConfigMaps count as unset; an unknown profile is a terminal error.
func (r *AuditConfigReconciler) profile(ctx context.Context) (string, error) {
	profile := DefaultProfile
	for _, src := range []struct{ name, key string }{{PolicyName, "policy"}, {SettingsName, "auditPolicy"}} {
		cm := &corev1.ConfigMap{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: ConfigNamespace, Name: src.name}, cm)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("get configmap %s/%s: %w", ConfigNamespace, src.name, err)
		}
		if v := cm.Data[src.key]; v != "" {
			if !slices.Contains(profiles, v) {
				return "", reconcile.TerminalError(fmt.Errorf("configmap %s/%s: %s: %q is not one of %v", ConfigNamespace, src.name, src.key, v, profiles))
			}
			profile = v
		}
	}
	return profile, nil
}

// Policy returns the audit.k8s.io/v1 Policy of a profile, as YAML.
func Policy(profile string) (string, error) {
	rule := func(level string, verbs ...string) map[string]any {
		r := map[string]any{"level": level}
		if len(verbs) > 0 {
			r["verbs"] = verbs
		}
		return r
	}
	var rules []any
	switch profile {
	case "Default":
		rules = []any{rule("Metadata")}
	case "WriteRequestBodies":
		rules = []any{rule("RequestResponse", "create", "update", "patch", "delete"), rule("Metadata")}
	case "AllRequestBodies":
		rules = []any{rule("RequestResponse")}
	case "None":
		rules = []any{rule("None")}
	default:
		return "", fmt.Errorf("unknown audit profile %q", profile)
	}
	data, err := yaml.Marshal(map[string]any{
		"apiVersion": "audit.k8s.io/v1",
		"kind":       "Policy",
		"omitStages": []string{"RequestReceived"},
		"rules":      rules,
	})
	return string(data), err
}
