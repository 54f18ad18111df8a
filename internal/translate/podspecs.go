package translate

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/namespaces"
)

// groupKindOf returns the group and kind of an object the engine writes as id: the object's
// own, else the kind discovery knows for id's resource, else the resource's name in its
// group (podspec.MayHold then judges by the group: a custom resource may hold pod specs).
func (e Engine) groupKindOf(id contract.Identity, obj *unstructured.Unstructured) schema.GroupKind {
	if obj != nil && obj.GetKind() != "" {
		return obj.GroupVersionKind().GroupKind()
	}
	if k, ok := e.Discovery.KindFor(id.GroupVersionResource()); ok {
		return schema.GroupKind{Group: id.Group, Kind: k}
	}
	return schema.GroupKind{Group: id.Group, Kind: id.Resource}
}

// knownPodBearing reports whether group and resource are a built-in pod-bearing kind's
// (podspec.Known): pods, podtemplates, replicationcontrollers and the workloads.
func knownPodBearing(group, resource string) bool {
	for _, gk := range podspec.KnownKinds() {
		if gk.Group == group && strings.ToLower(gk.Kind)+"s" == resource {
			return true
		}
	}
	return false
}

// runsPods reports whether an object of kind gk, written to a target of group, may make pods
// run: a kind that may hold pod specs (podspec.MayHold), unless it is a shadow copy
// (namespaces.IsShadowGroup), which topolayer keeps for the operator to read and nothing runs.
func runsPods(group string, gk schema.GroupKind) bool {
	if _, shadow := namespaces.IsShadowGroup(group); shadow {
		return false
	}
	if _, shadow := namespaces.IsShadowGroup(gk.Group); shadow {
		return false
	}
	return podspec.MayHold(gk)
}

// podSitesOf returns the pod specs of an unstructured object (podspec.Find); none for a
// shadow copy (runsPods).
func podSitesOf(obj *unstructured.Unstructured) ([]podspec.Site, error) {
	gk := obj.GroupVersionKind().GroupKind()
	if !runsPods(gk.Group, gk) {
		return nil, nil
	}
	return podspec.Find(gk, obj.Object)
}
