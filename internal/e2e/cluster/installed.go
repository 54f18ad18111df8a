package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/topology"
)

// Installed names what an Environment creates that an OpenShift installation would have
// created, so that the sample operators run on a fresh environment without setup: the
// namespaces openshift-config, where a cluster's users edit settings, and
// openshift-config-managed, where the cluster publishes configuration for them (the guest,
// or the one cluster); the sample operator's own namespace, where it records events (standalone: it is
// part of the operator's installation, not of its outputs; hosted, its events land in the
// HCP namespace); and the sample operator's CR `cluster`, which its installation creates
// (hosted: as its shadow in the HCP namespace, where HyperShift would create it).
var Installed = struct {
	ConfigNamespace, ConfigManagedNamespace, SampleOperatorNamespace, SampleName string
}{"openshift-config", "openshift-config-managed", "openshift-sample-operator", "cluster"}

// sampleCR is the sample operator's CR, group operator.topolayer.dev (shadowed when hosted).
func sampleCR(group, namespace string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"managementState": "Managed"}}}
	u.SetAPIVersion(group + "/v1alpha1")
	u.SetKind("Sample")
	u.SetName(Installed.SampleName)
	u.SetNamespace(namespace)
	return u
}

// install creates what Installed names on the servers of the environment.
func (e *Environment) install(ctx context.Context, topo *topology.Topology) error {
	type item struct {
		cluster string
		obj     client.Object
	}
	ns := func(name string) client.Object {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	}
	var items []item
	if hcp, ok := topo.HostedControlPlane(); ok {
		items = []item{
			{Guest, ns(Installed.ConfigNamespace)},
			{Guest, ns(Installed.ConfigManagedNamespace)},
			{Management, sampleCR(namespaces.ShadowGroup("operator.topolayer.dev"), hcp.Namespace)},
		}
	} else {
		items = []item{
			{Single, ns(Installed.ConfigNamespace)},
			{Single, ns(Installed.ConfigManagedNamespace)},
			{Single, ns(Installed.SampleOperatorNamespace)},
			{Single, sampleCR("operator.topolayer.dev", "")},
		}
	}
	for _, it := range items {
		if err := create(ctx, e.Config(it.cluster), it.obj); err != nil {
			return fmt.Errorf("%s: %w", it.cluster, err)
		}
	}
	return nil
}

// create creates obj, unless it exists.
func create(ctx context.Context, cfg *rest.Config, obj client.Object) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, client.ObjectKeyFromObject(obj), err)
	}
	return nil
}
