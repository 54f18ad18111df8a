package sample

import (
	"context"
	"fmt"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/topolayer/topolayer/internal/samples/internal/clusteroperator"
)

// StatusReconciler reports how the operand's Deployment compares with the replicas the
// settings ask for: on the
// ClusterOperator (Available, Progressing, Degraded, the operator's version and its related
// objects) and on the Sample (the same conditions and status.observedReplicas), both with
// server-side apply of the status subresource.
type StatusReconciler struct {
	Client client.Client
	// Clock gives lastTransitionTime of conditions that change.
	Clock clock.PassiveClock
}

var _ reconcile.Reconciler = &StatusReconciler{}

// Reconcile implements reconcile.Reconciler.
func (r *StatusReconciler) Reconcile(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
	sample, err := getSample(ctx, r.Client)
	if err != nil {
		return reconcile.Result{}, err
	}
	var dep *appsv1.Deployment
	if managed(sample) {
		dep = &appsv1.Deployment{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: OperandNamespace, Name: OperandName}, dep)
		if apierrors.IsNotFound(err) {
			dep = nil
		} else if err != nil {
			return reconcile.Result{}, fmt.Errorf("get deployment %s/%s: %w", OperandNamespace, OperandName, err)
		}
	}
	settings, err := readSettings(ctx, r.Client)
	if err != nil {
		return reconcile.Result{}, err
	}
	conds := Conditions(managed(sample), dep, settings.Replicas)
	now := r.Clock.Now()

	err = clusteroperator.Apply(ctx, r.Client, ClusterOperatorName, StatusController, now, clusteroperator.Status{
		Conditions: conds,
		Versions:   []configv1.OperandVersion{{Name: "operator", Version: Version}},
		RelatedObjects: []configv1.ObjectReference{
			{Group: sampleGVK.Group, Resource: "samples", Name: ConfigName},
			{Group: "", Resource: "namespaces", Name: OperatorNamespace},
			{Group: "", Resource: "namespaces", Name: OperandNamespace},
		},
	})
	if err != nil {
		return reconcile.Result{}, err
	}

	var available int64
	if dep != nil {
		available = int64(dep.Status.AvailableReplicas)
	}
	status := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": sampleGVK.GroupVersion().String(),
		"kind":       sampleGVK.Kind,
		"metadata":   map[string]any{"name": ConfigName},
		"status": map[string]any{
			"observedReplicas": available,
			"conditions":       sampleConditions(sample, conds, now),
		},
	}}
	if err := r.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(status), client.FieldOwner(StatusController), client.ForceOwnership); err != nil {
		return reconcile.Result{}, fmt.Errorf("apply %s %s status: %w", samples.GroupResource(), ConfigName, err)
	}
	return reconcile.Result{}, nil
}

// Conditions computes Available, Progressing and Degraded from the operand's Deployment
// (nil when it does not exist, or when the operand is not managed) and the desired replicas:
// Available while a pod is, Progressing until the Deployment runs the desired replicas, all
// updated and available.
func Conditions(isManaged bool, dep *appsv1.Deployment, desired int32) []clusteroperator.Condition {
	cond := func(t configv1.ClusterStatusConditionType, s configv1.ConditionStatus, reason, msg string) clusteroperator.Condition {
		return clusteroperator.Condition{Type: t, Status: s, Reason: reason, Message: msg}
	}
	const yes, no = configv1.ConditionTrue, configv1.ConditionFalse
	ref := fmt.Sprintf("deployment %s/%s", OperandNamespace, OperandName)
	switch {
	case !isManaged:
		msg := "the operand is not managed"
		return []clusteroperator.Condition{
			cond(configv1.OperatorAvailable, yes, "Unmanaged", msg),
			cond(configv1.OperatorProgressing, no, "Unmanaged", msg),
			cond(configv1.OperatorDegraded, no, "Unmanaged", msg),
		}
	case dep == nil:
		return []clusteroperator.Condition{
			cond(configv1.OperatorAvailable, no, "DeploymentMissing", ref+" does not exist"),
			cond(configv1.OperatorProgressing, yes, "DeploymentMissing", "waiting for "+ref+" to be created"),
			cond(configv1.OperatorDegraded, no, "AsExpected", "no problem observed"),
		}
	}
	st := dep.Status
	pods := fmt.Sprintf("%s: %d/%d pods updated, %d/%d available", ref, st.UpdatedReplicas, desired, st.AvailableReplicas, desired)
	available := cond(configv1.OperatorAvailable, yes, "AsExpected", pods)
	if st.AvailableReplicas == 0 && desired > 0 {
		available = cond(configv1.OperatorAvailable, no, "NoPodsAvailable", pods)
	}
	progressing := cond(configv1.OperatorProgressing, no, "AsExpected", pods)
	if dep.Spec.Replicas == nil || *dep.Spec.Replicas != desired || st.ObservedGeneration < dep.Generation ||
		st.UpdatedReplicas < desired || st.AvailableReplicas < desired {
		progressing = cond(configv1.OperatorProgressing, yes, "PodsUpdating", pods)
	}
	return []clusteroperator.Condition{available, progressing, cond(configv1.OperatorDegraded, no, "AsExpected", "no problem observed")}
}

// sampleConditions turns conds into the Sample's metav1.Condition-shaped conditions, keeping
// each lastTransitionTime while its status does not change.
func sampleConditions(sample *unstructured.Unstructured, conds []clusteroperator.Condition, now time.Time) []any {
	since := map[string]string{}
	old, _, _ := unstructured.NestedSlice(sample.Object, "status", "conditions")
	for _, o := range old {
		m, ok := o.(map[string]any)
		if !ok {
			continue
		}
		t, _ := m["type"].(string)
		s, _ := m["status"].(string)
		ltt, _ := m["lastTransitionTime"].(string)
		since[t+"="+s] = ltt
	}
	out := make([]any, 0, len(conds))
	for _, c := range conds {
		ltt := since[string(c.Type)+"="+string(c.Status)]
		if ltt == "" {
			ltt = now.UTC().Format(time.RFC3339)
		}
		out = append(out, map[string]any{
			"type":               string(c.Type),
			"status":             string(c.Status),
			"reason":             c.Reason,
			"message":            c.Message,
			"lastTransitionTime": ltt,
			"observedGeneration": sample.GetGeneration(),
		})
	}
	return out
}
