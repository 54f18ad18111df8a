package clusteroperator

import (
	"context"
	"fmt"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Condition is one condition to report.
type Condition struct {
	Type    configv1.ClusterStatusConditionType
	Status  configv1.ConditionStatus
	Reason  string
	Message string
}

// Status is what an operator reports on its ClusterOperator.
type Status struct {
	Conditions     []Condition
	Versions       []configv1.OperandVersion
	RelatedObjects []configv1.ObjectReference
}

// Apply makes sure the ClusterOperator name exists, creating it when it is missing, and
// applies s as its status with fieldManager. A condition keeps its lastTransitionTime while
// its status does not change; otherwise it is now.
func Apply(ctx context.Context, c client.Client, name, fieldManager string, now time.Time, s Status) error {
	existing := &configv1.ClusterOperator{}
	err := c.Get(ctx, client.ObjectKey{Name: name}, existing)
	if apierrors.IsNotFound(err) {
		existing = &configv1.ClusterOperator{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if err := c.Create(ctx, existing); err != nil {
			return fmt.Errorf("create clusteroperator %s: %w", name, err)
		}
	} else if err != nil {
		return fmt.Errorf("get clusteroperator %s: %w", name, err)
	}

	status := configv1.ClusterOperatorStatus{Versions: s.Versions, RelatedObjects: s.RelatedObjects}
	for _, cond := range s.Conditions {
		since := metav1.NewTime(now)
		for _, old := range existing.Status.Conditions {
			if old.Type == cond.Type && old.Status == cond.Status && !old.LastTransitionTime.IsZero() {
				since = old.LastTransitionTime
			}
		}
		status.Conditions = append(status.Conditions, configv1.ClusterOperatorStatusCondition{
			Type: cond.Type, Status: cond.Status, Reason: cond.Reason, Message: cond.Message, LastTransitionTime: since,
		})
	}
	fields, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&status)
	if err != nil {
		return fmt.Errorf("clusteroperator %s: status: %w", name, err)
	}
	delete(fields, "extension") // the operator owns no extension fields
	apply := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": configv1.GroupVersion.String(),
		"kind":       "ClusterOperator",
		"metadata":   map[string]any{"name": name},
		"status":     fields,
	}}
	if err := c.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(apply), client.FieldOwner(fieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("apply clusteroperator %s status: %w", name, err)
	}
	return nil
}
