package apply

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// HostedControlPlaneGVR is the resource of HyperShift's HostedControlPlane objects.
var HostedControlPlaneGVR = schema.GroupVersionResource{Group: "hypershift.openshift.io", Version: "v1beta1", Resource: "hostedcontrolplanes"}

// ResolveHostedControlPlane reads the HostedControlPlane namespace/name on the cluster of
// cfg and returns an ownerReference to it, for Options.HostedControlPlane. It is not a
// controller reference and does not block the owner's deletion.
func ResolveHostedControlPlane(ctx context.Context, cfg *rest.Config, namespace, name string) (*metav1.OwnerReference, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	hcp, err := dyn.Resource(HostedControlPlaneGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("resolve the HostedControlPlane %s/%s: %w", namespace, name, err)
	}
	return &metav1.OwnerReference{
		APIVersion: hcp.GetAPIVersion(),
		Kind:       hcp.GetKind(),
		Name:       hcp.GetName(),
		UID:        hcp.GetUID(),
	}, nil
}
