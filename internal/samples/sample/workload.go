package sample

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsac "k8s.io/client-go/applyconfigurations/apps/v1"
	coreac "k8s.io/client-go/applyconfigurations/core/v1"
	metaac "k8s.io/client-go/applyconfigurations/meta/v1"
	rbacac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/topolayer/topolayer/internal/samples/internal/namespace"
)

// configHashAnnotation on the pod template rolls the operand out when its message changes.
const configHashAnnotation = "operator.topolayer.dev/config-hash"

// Settings are the administrator's choices, from openshift-config/sample-settings.
type Settings struct {
	// Replicas of the operand; 1 when unset.
	Replicas int32
	// Message the operand serves; DefaultMessage when unset.
	Message string
}

// readSettings reads the settings ConfigMap; a missing ConfigMap means the defaults.
func readSettings(ctx context.Context, c client.Client) (Settings, error) {
	s := Settings{Replicas: 1, Message: DefaultMessage}
	cm := &corev1.ConfigMap{}
	err := c.Get(ctx, client.ObjectKey{Namespace: SettingsNamespace, Name: SettingsName}, cm)
	if apierrors.IsNotFound(err) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("get configmap %s/%s: %w", SettingsNamespace, SettingsName, err)
	}
	if v, ok := cm.Data["replicas"]; ok {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < 0 {
			return s, reconcile.TerminalError(fmt.Errorf("configmap %s/%s: replicas: %q is not a non-negative integer", SettingsNamespace, SettingsName, v))
		}
		s.Replicas = int32(n)
	}
	if v, ok := cm.Data["message"]; ok && v != "" {
		s.Message = v
	}
	return s, nil
}

// WorkloadReconciler runs the operand: its namespace, configuration, token, RBAC, Service
// and Deployment, all server-side applied except the Namespace, which is created when
// missing (the contract cannot apply Namespaces). It records DeploymentCreated or
// DeploymentUpdated when the Deployment is new or changes.
type WorkloadReconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	// Image is the operand image.
	Image string
}

var _ reconcile.Reconciler = &WorkloadReconciler{}

// Reconcile implements reconcile.Reconciler.
func (r *WorkloadReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	sample, err := getSample(ctx, r.Client)
	if err != nil {
		return reconcile.Result{}, err
	}
	if !managed(sample) {
		log.FromContext(ctx).Info("operand not managed")
		return reconcile.Result{}, nil
	}
	settings, err := readSettings(ctx, r.Client)
	if err != nil {
		return reconcile.Result{}, err
	}

	if err := namespace.Ensure(ctx, r.Client, OperandNamespace); err != nil {
		return reconcile.Result{}, err
	}

	existing := &appsv1.Deployment{}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: OperandNamespace, Name: OperandName}, existing)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, fmt.Errorf("get deployment %s/%s: %w", OperandNamespace, OperandName, err)
	}
	missing := apierrors.IsNotFound(err)

	deployment := Deployment(settings, r.Image)
	for _, ac := range append(Operands(settings), deployment) {
		if err := r.Client.Apply(ctx, ac, client.FieldOwner(WorkloadController), client.ForceOwnership); err != nil {
			return reconcile.Result{}, err
		}
	}

	switch {
	case missing:
		r.Recorder.Eventf(existing, corev1.EventTypeNormal, "DeploymentCreated", "Created Deployment.apps/%s -n %s because it was missing", OperandName, OperandNamespace)
	case changed(existing, deployment):
		r.Recorder.Eventf(existing, corev1.EventTypeNormal, "DeploymentUpdated", "Updated Deployment.apps/%s -n %s because it changed", OperandName, OperandNamespace)
	}
	return reconcile.Result{}, nil
}

// changed reports whether applying want would change what the operator owns in have.
func changed(have *appsv1.Deployment, want *appsac.DeploymentApplyConfiguration) bool {
	if have.Spec.Replicas == nil || *have.Spec.Replicas != *want.Spec.Replicas {
		return true
	}
	if have.Spec.Template.Annotations[configHashAnnotation] != want.Spec.Template.Annotations[configHashAnnotation] {
		return true
	}
	c := have.Spec.Template.Spec.Containers
	return len(c) != 1 || c[0].Image != *want.Spec.Template.Spec.Containers[0].Image
}

// labels select the operand's pods.
func labels() map[string]string { return map[string]string{"app": OperandName} }

// Operands returns everything of the operand but its Deployment, in the order it is applied.
func Operands(s Settings) []runtime.ApplyConfiguration {
	sa := rbacac.Subject().WithKind(rbacv1.ServiceAccountKind).WithName(OperandName).WithNamespace(OperandNamespace)
	return []runtime.ApplyConfiguration{
		coreac.ServiceAccount(OperandName, OperandNamespace),
		coreac.ConfigMap(ConfigMapName, OperandNamespace).WithData(map[string]string{"message": s.Message}),
		coreac.Secret(SecretName, OperandNamespace).
			WithAnnotations(map[string]string{corev1.ServiceAccountNameKey: OperandName}).
			WithType(corev1.SecretTypeServiceAccountToken),
		rbacac.Role(OperandName, OperandNamespace).WithRules(
			rbacac.PolicyRule().WithAPIGroups("").WithResources("configmaps").WithResourceNames(ConfigMapName).WithVerbs("get", "list", "watch"),
			// The operand's status: create cannot be narrowed to a name, the rest is.
			rbacac.PolicyRule().WithAPIGroups("").WithResources("configmaps").WithVerbs("create"),
			rbacac.PolicyRule().WithAPIGroups("").WithResources("configmaps").WithResourceNames(OperandStatusName).WithVerbs("get", "update", "patch"),
		),
		rbacac.RoleBinding(OperandName, OperandNamespace).
			WithRoleRef(rbacac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("Role").WithName(OperandName)).
			WithSubjects(sa),
		coreac.Service(OperandName, OperandNamespace).WithSpec(coreac.ServiceSpec().
			WithSelector(labels()).
			WithPorts(coreac.ServicePort().WithName("https").WithPort(443).WithTargetPort(intstr.FromString("https")))),
		rbacac.ClusterRole(ClusterRoleName).WithRules(
			rbacac.PolicyRule().WithAPIGroups(sampleGVK.Group).WithResources("samples").WithVerbs("get", "list", "watch"),
		),
		rbacac.ClusterRoleBinding(ClusterRoleName).
			WithRoleRef(rbacac.RoleRef().WithAPIGroup(rbacv1.GroupName).WithKind("ClusterRole").WithName(ClusterRoleName)).
			WithSubjects(sa),
	}
}

// Deployment returns the operand's Deployment.
func Deployment(s Settings, image string) *appsac.DeploymentApplyConfiguration {
	sum := sha256.Sum256([]byte(s.Message))
	return appsac.Deployment(OperandName, OperandNamespace).
		WithLabels(labels()).
		WithSpec(appsac.DeploymentSpec().
			WithReplicas(s.Replicas).
			WithSelector(metaac.LabelSelector().WithMatchLabels(labels())).
			WithTemplate(coreac.PodTemplateSpec().
				WithLabels(labels()).
				WithAnnotations(map[string]string{configHashAnnotation: hex.EncodeToString(sum[:8])}).
				WithSpec(coreac.PodSpec().
					WithServiceAccountName(OperandName).
					WithContainers(coreac.Container().
						WithName(OperandName).
						WithImage(image).
						WithCommand(OperandCommand).
						WithEnv(coreac.EnvVar().WithName("MESSAGE").WithValueFrom(coreac.EnvVarSource().
							WithConfigMapKeyRef(coreac.ConfigMapKeySelector().WithName(ConfigMapName).WithKey("message")))).
						WithPorts(coreac.ContainerPort().WithName("https").WithContainerPort(8443)).
						WithVolumeMounts(
							coreac.VolumeMount().WithName("config").WithMountPath("/etc/sample").WithReadOnly(true),
							coreac.VolumeMount().WithName("token").WithMountPath("/var/run/secrets/sample").WithReadOnly(true),
						)).
					WithVolumes(
						coreac.Volume().WithName("config").WithConfigMap(coreac.ConfigMapVolumeSource().WithName(ConfigMapName)),
						coreac.Volume().WithName("token").WithSecret(coreac.SecretVolumeSource().WithSecretName(SecretName)),
					))))
}
