package manager

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted/componentstatus"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/topology"
)

// ComponentStatusOptions configure the HyperShift ControlPlaneComponents that AddToManager
// writes when EmbedOptions.ComponentStatus is set: one per Deployment an operator places in
// the hosted control plane's namespace, named after the component, whose status comes from
// the Deployment's rollout and from the operator's own status (its ClusterOperator and its
// last run; package componentstatus says how).
type ComponentStatusOptions struct {
	// Names maps the standalone name of a placed Deployment (its name in the operator's
	// outputs: "oauth-openshift") to its component's name; a Deployment not named here is
	// the component of its standalone name.
	Names map[string]string
}

// ComponentFieldManager is the field manager of the ControlPlaneComponents topolayer writes.
const ComponentFieldManager = "topolayer-components"

// LabelComponentOf names, on a ControlPlaneComponent topolayer writes, the operator that
// placed the component's workload. (Not namespaces.LabelOperator: the object is not one of
// the operator's outputs.)
const LabelComponentOf = "topolayer.dev/component-of"

// componentReconciler writes the ControlPlaneComponent of each Deployment the operators
// place in the hosted control plane's namespace.
type componentReconciler struct {
	client   client.Client
	topo     *topology.Topology
	opts     ComponentStatusOptions
	writer   componentstatus.Writer
	statusNS string
	// shadowCO is the resource of the ClusterOperators the operators write on the home
	// cluster (their shadows); empty when the home cluster does not serve it.
	shadowCO schema.GroupVersionKind
}

// addComponentStatus registers the component reconciler with mgr: it watches the placed
// Deployments, the operators' status objects and their ClusterOperators' shadows.
func addComponentStatus(mgr ctrl.Manager, topo *topology.Topology, m *Manager, opts ComponentStatusOptions) error {
	hcp, ok := topo.HostedControlPlane()
	if !ok {
		return fmt.Errorf("a ControlPlaneComponent needs a hosted control plane: topology %s has none", topo.Name())
	}
	r := &componentReconciler{
		client: mgr.GetClient(), topo: topo, opts: opts, statusNS: topo.Status().Namespace,
		writer: componentstatus.Writer{Client: mgr.GetClient(), Namespace: hcp.Namespace, Owner: m.owner, FieldManager: ComponentFieldManager},
	}
	placed := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == hcp.Namespace && o.GetLabels()[namespaces.LabelOperator] != ""
	})
	b := ctrl.NewControllerManagedBy(mgr).
		Named("topolayer-control-plane-components").
		For(&appsv1.Deployment{}, builder.WithPredicates(placed)).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.operatorDeployments), builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool {
			return o.GetNamespace() == r.statusNS && o.GetLabels()[LabelStatus] == "true"
		})))
	coGVR := schema.GroupVersionResource{Group: namespaces.ShadowGroup("config.openshift.io"), Version: "v1", Resource: "clusteroperators"}
	if gvk, err := mgr.GetRESTMapper().KindFor(coGVR); err == nil {
		r.shadowCO = gvk
		co := &unstructured.Unstructured{}
		co.SetGroupVersionKind(gvk)
		b = b.Watches(co, handler.EnqueueRequestsFromMapFunc(r.operatorDeployments), builder.WithPredicates(placed))
	}
	return b.Complete(r)
}

// operatorDeployments maps an object of an operator (labelled with its name) to the
// Deployments it placed.
func (r *componentReconciler) operatorDeployments(ctx context.Context, o client.Object) []reconcile.Request {
	op := o.GetLabels()[namespaces.LabelOperator]
	if op == "" {
		return nil
	}
	var list appsv1.DeploymentList
	if err := r.client.List(ctx, &list, client.InNamespace(r.writer.Namespace), client.MatchingLabels{namespaces.LabelOperator: op}); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "list the operator's Deployments", "operator", op)
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, d := range list.Items {
		out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&d)})
	}
	return out
}

// Reconcile writes the ControlPlaneComponent of one placed Deployment.
func (r *componentReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	d := &appsv1.Deployment{}
	if err := r.client.Get(ctx, req.NamespacedName, d); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	opName := d.Labels[namespaces.LabelOperator]
	if opName == "" {
		return reconcile.Result{}, nil
	}
	name := d.Name
	id := contract.Identity{Group: appsv1.GroupName, Version: "v1", Resource: "deployments", Namespace: d.Namespace, Name: d.Name}
	if src, err := r.topo.Names().ToSource(r.topo.Home(), id, d.Annotations); err == nil {
		name = src.Name
	}
	if n, ok := r.opts.Names[name]; ok {
		name = n
	}
	op := componentstatus.Operator{Name: opName}
	if err := r.readOperator(ctx, &op); err != nil {
		return reconcile.Result{}, err
	}
	c := componentstatus.ForDeployment(name, d, op)
	c.Labels = map[string]string{LabelComponentOf: opName}
	changed, err := r.writer.Write(ctx, c)
	if err != nil {
		return reconcile.Result{}, fmt.Errorf("component %s (Deployment %s): %w", name, req.NamespacedName, err)
	}
	if changed {
		ctrl.LoggerFrom(ctx).V(1).Info("component status written", "component", name, "available", c.Available.Status, "rolloutComplete", c.RolloutComplete.Status)
	}
	return reconcile.Result{}, nil
}

// readOperator reads what the operator says of itself: its last run's result (its status
// object) and its ClusterOperator's shadow, when it writes one.
func (r *componentReconciler) readOperator(ctx context.Context, op *componentstatus.Operator) error {
	cm := &corev1.ConfigMap{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: r.statusNS, Name: StatusName(op.Name)}, cm)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("read the status of operator %s: %w", op.Name, err)
	default:
		var rec RunRecord
		if err := yaml.Unmarshal([]byte(cm.Data["status.yaml"]), &rec); err == nil && (rec.Result == ResultFailed || rec.Result == ResultRejected) {
			op.RunError = fmt.Sprintf("run %d %s: %s", rec.Run, rec.Result, rec.Message)
		}
	}
	if r.shadowCO.Empty() {
		return nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(r.shadowCO.GroupVersion().WithKind(r.shadowCO.Kind + "List"))
	if err := r.client.List(ctx, list, client.InNamespace(r.writer.Namespace), client.MatchingLabels{namespaces.LabelOperator: op.Name}); err != nil {
		return fmt.Errorf("read the ClusterOperator of operator %s: %w", op.Name, err)
	}
	if len(list.Items) > 0 {
		componentstatus.OperatorFromClusterOperator(op, &list.Items[0])
	}
	return nil
}
