package sdk

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/contract"
)

// Exact names one object of a resource for input-resources or output-resources: namespace
// is "" for cluster-scoped objects.
//
//	operator.Exact(corev1.SchemeGroupVersion.WithResource("configmaps"), "openshift-config", "sample-settings")
func Exact(gvr schema.GroupVersionResource, namespace, name string) contract.ExactResourceID {
	return contract.ExactResourceID{
		ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource},
		Namespace:              namespace,
		Name:                   name,
	}
}

// GeneratedName names the creates of a resource that let the server pick the name from
// generateName, for output-resources' generatedNameResources.
func GeneratedName(gvr schema.GroupVersionResource, namespace, generateName string) contract.ExactResourceID {
	return Exact(gvr, namespace, generateName)
}
