package hosted

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// HostedControlPlaneGVR returns the resource of HyperShift's HostedControlPlane objects.
func HostedControlPlaneGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedcontrolplanes"}
}

// HostedControlPlaneGVK returns the kind of HyperShift's HostedControlPlane objects.
func HostedControlPlaneGVK() schema.GroupVersionKind {
	return HostedControlPlaneGVR().GroupVersion().WithKind("HostedControlPlane")
}

// The labels, taints and names HyperShift gives what runs in a hosted control plane's
// namespace; the hypershift profile sets them on every workload it places there.
const (
	// LabelHostedControlPlane labels the pods of a hosted control plane with its namespace.
	LabelHostedControlPlane = "hypershift.openshift.io/hosted-control-plane"
	// LabelControlPlaneComponent labels the pods of one control-plane component.
	LabelControlPlaneComponent = "hypershift.openshift.io/control-plane-component"
	// TaintControlPlane is the taint of the management cluster's control-plane nodes.
	TaintControlPlane = "hypershift.openshift.io/control-plane"
	// TaintCluster is the taint, valued by the HCP namespace, of nodes dedicated to one
	// hosted cluster.
	TaintCluster = "hypershift.openshift.io/cluster"
	// PriorityClassControlPlane is the priority class of control-plane workloads.
	PriorityClassControlPlane = "hypershift-control-plane"
	// PullSecretName is the image pull secret HyperShift keeps in every HCP namespace.
	PullSecretName = "pull-secret"
)

// ResolveHostedControlPlane reads the HostedControlPlane namespace/name on the cluster of
// cfg and returns an ownerReference to it, for apply.Options.HostedControlPlane. It is not a
// controller reference and does not block the owner's deletion.
func ResolveHostedControlPlane(ctx context.Context, cfg *rest.Config, namespace, name string) (*metav1.OwnerReference, error) {
	hcp, err := GetHostedControlPlane(ctx, cfg, namespace, name)
	if err != nil {
		return nil, err
	}
	return OwnerReference(hcp), nil
}

// GetHostedControlPlane reads the HostedControlPlane namespace/name on the cluster of cfg:
// the object whose ownerReference (OwnerReference) and profile inputs
// (ParseHostedControlPlane) topolayer needs.
func GetHostedControlPlane(ctx context.Context, cfg *rest.Config, namespace, name string) (*unstructured.Unstructured, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	hcp, err := dyn.Resource(HostedControlPlaneGVR()).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("resolve the HostedControlPlane %s/%s: %w", namespace, name, err)
	}
	return hcp, nil
}

// OwnerReference returns the ownerReference every object written in the namespace of the
// HostedControlPlane hcp gets: not a controller reference, and not blocking its deletion.
func OwnerReference(hcp *unstructured.Unstructured) *metav1.OwnerReference {
	return &metav1.OwnerReference{
		APIVersion: hcp.GetAPIVersion(),
		Kind:       hcp.GetKind(),
		Name:       hcp.GetName(),
		UID:        hcp.GetUID(),
	}
}

// ControlPlaneComponentGVR returns the resource of HyperShift's ControlPlaneComponent
// objects: one per component of a hosted control plane, in its namespace, whose status
// (conditions Available and RolloutComplete, version, resources) the HostedControlPlane's
// availability and version are computed from.
func ControlPlaneComponentGVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "controlplanecomponents"}
}

// ControlPlaneComponentGVK returns the kind of HyperShift's ControlPlaneComponent objects.
func ControlPlaneComponentGVK() schema.GroupVersionKind {
	return ControlPlaneComponentGVR().GroupVersion().WithKind("ControlPlaneComponent")
}

// The condition types and reasons of a ControlPlaneComponent's status, as HyperShift's
// api/hypershift/v1beta1 names them.
const (
	// ComponentAvailable says whether the component is available.
	ComponentAvailable = "Available"
	// ComponentRolloutComplete says whether the component has completed its rollout.
	ComponentRolloutComplete = "RolloutComplete"
	// ReasonAsExpected is the reason of a condition that is as it should be.
	ReasonAsExpected = "AsExpected"
	// ReasonReconciliationError is the reason of a RolloutComplete that an error blocks.
	ReasonReconciliationError = "ReconciliationError"
)
