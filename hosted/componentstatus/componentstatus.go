package componentstatus

import (
	"context"
	"fmt"
	"reflect"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/topolayer/topolayer/hosted"
)

// Resource is one object of a component, as a ControlPlaneComponent lists it.
type Resource struct {
	Kind  string `json:"kind"`
	Group string `json:"group"`
	Name  string `json:"name"`
}

// Component is what a ControlPlaneComponent's status says of one component.
type Component struct {
	// Name names the component and its ControlPlaneComponent.
	Name string
	// Version is the component's version once its rollout is complete; "" leaves the
	// version the object holds.
	Version string
	// Resources are the objects that make the component.
	Resources []Resource
	// Labels are set on its ControlPlaneComponent when Write creates it.
	Labels map[string]string
	// Available and RolloutComplete are its conditions (their types are set by Write).
	Available, RolloutComplete metav1.Condition
}

// Operator is what the operator that placed a component says of itself.
type Operator struct {
	// Name names the operator, for messages.
	Name string
	// Conditions are its ClusterOperator's status conditions by type (Available,
	// Progressing, Degraded); none when it writes no ClusterOperator.
	Conditions map[string]OperatorCondition
	// Version is the version its ClusterOperator reports for the operator.
	Version string
	// RunError is why its last run failed or was rejected; "" when it succeeded.
	RunError string
}

// OperatorCondition is one condition of a ClusterOperator.
type OperatorCondition struct {
	Status, Reason, Message string
}

// ForDeployment returns the status of the component whose workload is d, placed by op:
//
//   - Available: the Deployment's Available condition (False when it has none), as
//     HyperShift's own components';
//   - RolloutComplete: False with ReconciliationError when the operator's last run failed;
//     otherwise True when every replica is updated, ready and available at the observed
//     generation, and the operator's ClusterOperator is not Progressing;
//   - Version: the operator's version once the rollout is complete;
//   - Resources: the Deployment.
func ForDeployment(name string, d *appsv1.Deployment, op Operator) Component {
	c := Component{Name: name, Resources: []Resource{{Kind: "Deployment", Group: appsv1.GroupName, Name: d.Name}}}

	c.Available = metav1.Condition{Status: metav1.ConditionFalse, Reason: "NotFound", Message: fmt.Sprintf("%s Deployment Available condition not found", d.Name)}
	for _, cond := range d.Status.Conditions {
		if cond.Type != appsv1.DeploymentAvailable {
			continue
		}
		if cond.Status == corev1.ConditionTrue {
			c.Available = metav1.Condition{Status: metav1.ConditionTrue, Reason: hosted.ReasonAsExpected, Message: fmt.Sprintf("Deployment %s is available", d.Name)}
		} else {
			c.Available = metav1.Condition{Status: metav1.ConditionFalse, Reason: "WaitingForAvailable", Message: fmt.Sprintf("Deployment %s is not available: %s", d.Name, cond.Message)}
		}
	}
	// The operator's own Available is not the component's: a standalone operator's
	// ClusterOperator also checks what only a standalone cluster has (routes reached from the
	// cluster, its own health checks), which HyperShift reports through the guest's
	// ClusterOperators, not the control plane's availability.

	replicas := ptr.Deref(d.Spec.Replicas, 1)
	s := d.Status
	switch p, progressing := op.Conditions["Progressing"]; {
	case op.RunError != "":
		c.RolloutComplete = metav1.Condition{Status: metav1.ConditionFalse, Reason: hosted.ReasonReconciliationError, Message: fmt.Sprintf("operator %s: %s", op.Name, op.RunError)}
	case s.AvailableReplicas != replicas || s.ReadyReplicas != replicas || s.UpdatedReplicas != replicas || s.Replicas != replicas ||
		s.UnavailableReplicas != 0 || d.Generation != s.ObservedGeneration:
		c.RolloutComplete = metav1.Condition{Status: metav1.ConditionFalse, Reason: "WaitingForRolloutComplete",
			Message: fmt.Sprintf("Waiting for deployment %s rollout to finish: %d out of %d new replicas have been updated", d.Name, s.UpdatedReplicas, replicas)}
	case progressing && p.Status == string(metav1.ConditionTrue):
		c.RolloutComplete = metav1.Condition{Status: metav1.ConditionFalse, Reason: "OperatorProgressing", Message: fmt.Sprintf("operator %s: %s: %s", op.Name, p.Reason, p.Message)}
	default:
		c.RolloutComplete = metav1.Condition{Status: metav1.ConditionTrue, Reason: hosted.ReasonAsExpected, Message: fmt.Sprintf("Deployment %s successfully rolled out", d.Name)}
		c.Version = op.Version
	}
	return c
}

// OperatorFromClusterOperator reads a ClusterOperator's status (of any group: a shadow
// too) into op's Conditions and Version.
func OperatorFromClusterOperator(op *Operator, co *unstructured.Unstructured) {
	conds, _, _ := unstructured.NestedSlice(co.Object, "status", "conditions")
	for _, raw := range conds {
		m, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		t, _ := m["type"].(string)
		if op.Conditions == nil {
			op.Conditions = map[string]OperatorCondition{}
		}
		s, _ := m["status"].(string)
		r, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		op.Conditions[t] = OperatorCondition{Status: s, Reason: r, Message: msg}
	}
	versions, _, _ := unstructured.NestedSlice(co.Object, "status", "versions")
	for _, raw := range versions {
		if m, ok := raw.(map[string]any); ok && m["name"] == "operator" {
			op.Version, _ = m["version"].(string)
		}
	}
}

// Client is what a Writer needs of a controller-runtime client.
type Client interface {
	client.Reader
	Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error
	Status() client.SubResourceWriter
}

// Writer writes ControlPlaneComponents in one namespace with server-side apply.
type Writer struct {
	// Client reads and writes them.
	Client Client
	// Namespace is the hosted control plane's namespace.
	Namespace string
	// Owner, when set, is the ownerReference every ControlPlaneComponent gets (the
	// HostedControlPlane).
	Owner *metav1.OwnerReference
	// FieldManager is the field manager of the writes.
	FieldManager string
	// Now tells the conditions' transition times; nil means time.Now.
	Now func() time.Time
}

// Write makes the ControlPlaneComponent of c say what c says: it creates the object when
// missing and applies its status, keeping the transition time of a condition whose status
// did not change. A status the object holds already costs no write; changed says whether
// one was made.
func (w Writer) Write(ctx context.Context, c Component) (changed bool, err error) {
	now := time.Now
	if w.Now != nil {
		now = w.Now
	}
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(hosted.ControlPlaneComponentGVK())
	err = w.Client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: c.Name}, cur)
	switch {
	case apierrors.IsNotFound(err):
		obj := w.object(c)
		obj.Object["spec"] = map[string]any{}
		if err := w.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(w.FieldManager), client.ForceOwnership); err != nil {
			return false, fmt.Errorf("create the ControlPlaneComponent %s/%s: %w", w.Namespace, c.Name, err)
		}
		cur = &unstructured.Unstructured{}
	case err != nil:
		return false, fmt.Errorf("read the ControlPlaneComponent %s/%s: %w", w.Namespace, c.Name, err)
	}

	var conds []metav1.Condition
	if raw, ok, _ := unstructured.NestedSlice(cur.Object, "status", "conditions"); ok {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"c": raw}, &struct {
			C *[]metav1.Condition `json:"c"`
		}{&conds}); err != nil {
			conds = nil
		}
	}
	before := append([]metav1.Condition(nil), conds...)
	for t, cond := range map[string]metav1.Condition{hosted.ComponentAvailable: c.Available, hosted.ComponentRolloutComplete: c.RolloutComplete} {
		cond.Type = t
		cond.LastTransitionTime = metav1.NewTime(now().UTC().Truncate(time.Second))
		meta.SetStatusCondition(&conds, cond)
	}
	version, _, _ := unstructured.NestedString(cur.Object, "status", "version")
	if c.Version != "" {
		version = c.Version
	}
	var oldResources []Resource
	if raw, ok, _ := unstructured.NestedSlice(cur.Object, "status", "resources"); ok {
		_ = runtime.DefaultUnstructuredConverter.FromUnstructured(map[string]any{"r": raw}, &struct {
			R *[]Resource `json:"r"`
		}{&oldResources})
	}
	oldVersion, _, _ := unstructured.NestedString(cur.Object, "status", "version")
	if reflect.DeepEqual(before, conds) && oldVersion == version && reflect.DeepEqual(oldResources, c.Resources) {
		return false, nil
	}

	status := map[string]any{}
	condList := make([]any, 0, len(conds))
	for _, cond := range conds {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&cond)
		if err != nil {
			return false, fmt.Errorf("ControlPlaneComponent %s/%s: condition %s: %w", w.Namespace, c.Name, cond.Type, err)
		}
		condList = append(condList, u)
	}
	status["conditions"] = condList
	if version != "" {
		status["version"] = version
	}
	resources := make([]any, 0, len(c.Resources))
	for _, r := range c.Resources {
		resources = append(resources, map[string]any{"kind": r.Kind, "group": r.Group, "name": r.Name})
	}
	status["resources"] = resources
	obj := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	obj.SetGroupVersionKind(hosted.ControlPlaneComponentGVK())
	obj.SetNamespace(w.Namespace)
	obj.SetName(c.Name)
	if err := w.Client.Status().Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(w.FieldManager), client.ForceOwnership); err != nil {
		return false, fmt.Errorf("write the status of the ControlPlaneComponent %s/%s: %w", w.Namespace, c.Name, err)
	}
	return true, nil
}

// object returns the skeleton of c's ControlPlaneComponent: its kind, name, namespace,
// labels and owner.
func (w Writer) object(c Component) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetGroupVersionKind(hosted.ControlPlaneComponentGVK())
	obj.SetNamespace(w.Namespace)
	obj.SetName(c.Name)
	if len(c.Labels) > 0 {
		obj.SetLabels(c.Labels)
	}
	if w.Owner != nil {
		obj.SetOwnerReferences([]metav1.OwnerReference{*w.Owner})
	}
	return obj
}
