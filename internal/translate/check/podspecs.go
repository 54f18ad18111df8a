package check

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/topolayer/topolayer/contract"
)

// groupKindOf returns the group and kind of an object the engine writes as id: the object's
// own, else the kind discovery knows for id's resource, else the resource's name in its
// group (podspec.MayHold then judges by the group: a custom resource may hold pod specs).
func (e *Checker) groupKindOf(id contract.Identity, obj *unstructured.Unstructured) schema.GroupKind {
	if obj != nil && obj.GetKind() != "" {
		return obj.GroupVersionKind().GroupKind()
	}
	if k, ok := e.Discovery.KindFor(id.GroupVersionResource()); ok {
		return schema.GroupKind{Group: id.Group, Kind: k}
	}
	return schema.GroupKind{Group: id.Group, Kind: id.Resource}
}
