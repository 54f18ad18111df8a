package apply

import (
	"bytes"
	"slices"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/topolayer/topolayer/contract"
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

// AppliedNoOp reports whether a server-side apply of applied by manager (to subresource,
// "" for the object itself) to live is proven to change nothing, without asking the server:
// every field of applied holds the same value in live, and every field that manager owns by
// an earlier apply of live (its managedFields entry) is still in applied, so none is removed.
// Lists match item by item at the same index, an item's fields being a subset of the live
// item's (the server's defaults fill the rest), except lists the API treats as sets or maps
// (status conditions by type, and lists live's managedFields record by value or key), which
// match in any order. A status condition that only moved its lastTransitionTime is unchanged
// (CarryTransitionTimes). An item of a list keyed by fields that leaves a key field out (a
// Service port without its protocol) matches the live item whose whole key manager's last
// apply recorded: the server defaulted that field when manager applied the item. false
// means "not proven": the server has to be asked (a dry-run), not that the apply changes
// something.
func AppliedNoOp(applied, live *unstructured.Unstructured, manager, subresource string) bool {
	if applied == nil || live == nil {
		return false
	}
	applied = CarryTransitionTimes(applied, live)
	var own *metav1.ManagedFieldsEntry
	mfs := live.GetManagedFields()
	for i, mf := range mfs {
		if mf.Manager == manager && mf.Operation == metav1.ManagedFieldsOperationApply && mf.Subresource == subresource {
			own = &mfs[i]
			break
		}
	}
	c := comparer{shapes: listShapes(live), ownKeys: keysOwned(own)}
	if !c.subset(applied.Object, live.Object, []string{}, true) {
		return false
	}
	return own == nil || ownedHeld(*own, applied.Object)
}

// UpdatedNoOp reports whether a PUT of updated to live (to subresource: "" for the object,
// "status" for its status) is proven to change nothing, without asking the server: every
// field of updated (of its status, labels and annotations, for the status) holds the same
// value in live, and every
// field of live that some manager set through that subresource is still in updated, so none
// is removed. A live field that no manager set is the server's default, which it sets again.
// false means "not proven".
func UpdatedNoOp(updated, live *unstructured.Unstructured, subresource string) bool {
	if updated == nil || live == nil {
		return false
	}
	updated = CarryTransitionTimes(updated, live)
	if subresource == "status" {
		if !semanticSubset(map[string]any{"status": updated.Object["status"]}, map[string]any{"status": live.Object["status"]}, live) ||
			!subset(stringMap(updated.GetLabels()), stringMap(live.GetLabels())) ||
			!subset(stringMap(updated.GetAnnotations()), stringMap(live.GetAnnotations())) {
			return false
		}
	} else if !semanticSubset(updated.Object, live.Object, live) {
		return false
	}
	for _, mf := range live.GetManagedFields() {
		if mf.Subresource == subresource && !ownedHeld(mf, updated.Object) {
			return false
		}
	}
	return true
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ownedHeld reports whether every field of a managedFields entry is present in obj.
func ownedHeld(mf metav1.ManagedFieldsEntry, obj map[string]any) bool {
	if mf.FieldsV1 == nil {
		return true
	}
	owned := &fieldpath.Set{}
	if err := owned.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
		return false
	}
	held := true
	owned.Iterate(func(p fieldpath.Path) {
		held = held && holds(obj, p)
	})
	return held
}

// semanticSubset is subset of two objects where the lists that the API treats as sets or
// maps (listShapes of live) match in any order, as the server compares them.
func semanticSubset(want, have map[string]any, live *unstructured.Unstructured) bool {
	return comparer{shapes: listShapes(live)}.subset(want, have, []string{}, true)
}

// subset reports whether every field of want holds the same value in have: maps by their
// keys (a field want sets to null may be absent), lists item by item, in order.
func subset(want, have any) bool {
	return comparer{}.subset(want, have, nil, false)
}

// scalarEqual compares two JSON scalars; numbers compare by value whether decoded as
// int64 (the API machinery's decoder) or float64 (YAML through JSON).
func scalarEqual(a, b any) bool {
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	return equality.Semantic.DeepEqual(a, b)
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case float64:
		return n, true
	case float32:
		return float64(n), true
	}
	return 0, false
}

// holds reports whether the field at path p (a managedFields path) is present in obj.
func holds(obj any, p fieldpath.Path) bool {
	cur := obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, ok := cur.(map[string]any)
			if !ok {
				return false
			}
			if cur, ok = m[*pe.FieldName]; !ok {
				return false
			}
		case pe.Key != nil:
			l, _ := cur.([]any)
			i := slices.IndexFunc(l, func(item any) bool {
				m, ok := item.(map[string]any)
				return ok && matchesKey(m, *pe.Key)
			})
			if i < 0 {
				return false
			}
			cur = l[i]
		case pe.Value != nil:
			l, _ := cur.([]any)
			want := value.ToString(*pe.Value)
			i := slices.IndexFunc(l, func(item any) bool {
				v := value.NewValueInterface(item)
				return v != nil && value.ToString(v) == want
			})
			if i < 0 {
				return false
			}
			cur = l[i]
		case pe.Index != nil:
			l, ok := cur.([]any)
			if !ok || *pe.Index < 0 || *pe.Index >= len(l) {
				return false
			}
			cur = l[*pe.Index]
		default:
			return false
		}
	}
	return true
}

// matchesKey reports whether a list item has the key fields of a managedFields key. A key
// field the item leaves out matches: the server recorded the key after defaulting it (a
// port's protocol).
func matchesKey(item map[string]any, key value.FieldList) bool {
	for _, f := range key {
		v, ok := item[f.Name]
		if !ok {
			continue
		}
		if iv := value.NewValueInterface(v); value.ToString(iv) != value.ToString(f.Value) {
			return false
		}
	}
	return true
}

// PatchedNoOp reports whether a JSON or merge patch (JSON bytes) of live, of the contract's
// patchType, is proven to change nothing, without asking the server: the patch applied to
// live here gives an Equivalent object. Strategic-merge and apply patches need the kind's
// schema, which the client does not have: they are never proven. false means "not proven".
func PatchedNoOp(live *unstructured.Unstructured, patchType string, patch []byte) bool {
	if live == nil {
		return false
	}
	doc, err := live.MarshalJSON()
	if err != nil {
		return false
	}
	var patched []byte
	switch patchType {
	case contract.PatchTypeMerge:
		patched, err = jsonpatch.MergePatch(doc, patch)
	case contract.PatchTypeJSON:
		var p jsonpatch.Patch
		if p, err = jsonpatch.DecodePatch(patch); err == nil {
			patched, err = p.Apply(doc)
		}
	default:
		return false
	}
	if err != nil {
		return false
	}
	after := &unstructured.Unstructured{}
	if err := after.UnmarshalJSON(patched); err != nil {
		return false
	}
	return Equivalent(live, after)
}
