package apply

import (
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Equivalent reports whether two versions of an object hold the same content: everything
// but metadata.resourceVersion, metadata.generation and metadata.managedFields (which record
// who wrote, and when, not what). A write whose dry-run result is Equivalent to the live
// object is a no-op.
func Equivalent(a, b *unstructured.Unstructured) bool {
	if a == nil || b == nil {
		return a == b
	}
	return equality.Semantic.DeepEqual(content(a), content(b))
}

// content returns a copy of obj without the fields Equivalent ignores.
func content(obj *unstructured.Unstructured) map[string]any {
	c := obj.DeepCopy()
	for _, f := range []string{"resourceVersion", "generation", "managedFields"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	return c.Object
}
