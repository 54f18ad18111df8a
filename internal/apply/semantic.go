package apply

import (
	"bytes"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// CarryTransitionTimes returns a copy of desire in which every status condition that did not
// transition keeps the live object's lastTransitionTime. A condition list is a list named
// conditions under status (at any depth of nested objects) whose items are objects keyed by
// type; a desired condition whose status equals that of the live condition of the same type
// did not transition (as meta.SetStatusCondition decides: a new reason or message is no
// transition), whatever lastTransitionTime the operator stamped (operators stamp --now on
// every offline run). A condition that did transition, or
// that the live object lacks, keeps its own time. desire and live are not modified; nil
// desire gives nil, nil live a plain copy.
func CarryTransitionTimes(desire, live *unstructured.Unstructured) *unstructured.Unstructured {
	if desire == nil {
		return nil
	}
	out := desire.DeepCopy()
	if live == nil {
		return out
	}
	ds, _ := out.Object["status"].(map[string]any)
	ls, _ := live.Object["status"].(map[string]any)
	carryTimes(ds, ls)
	return out
}

// carryTimes is CarryTransitionTimes on one object of the status: its conditions, and the
// objects it nests.
func carryTimes(desire, live map[string]any) {
	if desire == nil || live == nil {
		return
	}
	for k, dv := range desire {
		switch d := dv.(type) {
		case map[string]any:
			l, _ := live[k].(map[string]any)
			carryTimes(d, l)
		case []any:
			if k != "conditions" {
				continue
			}
			l, _ := live[k].([]any)
			liveByType := conditionsByType(l)
			for _, item := range d {
				c, ok := item.(map[string]any)
				if !ok {
					continue
				}
				t, ok := c["type"].(string)
				if !ok {
					continue
				}
				lc, ok := liveByType[t]
				if !ok || !sameCondition(c, lc) {
					continue
				}
				if lt, ok := lc["lastTransitionTime"]; ok {
					c["lastTransitionTime"] = lt
				}
			}
		}
	}
}

// conditionsByType indexes a condition list by type; nil when an item is not an object
// with a string type (not a condition list).
func conditionsByType(l []any) map[string]map[string]any {
	out := make(map[string]map[string]any, len(l))
	for _, item := range l {
		c, ok := item.(map[string]any)
		if !ok {
			return nil
		}
		t, ok := c["type"].(string)
		if !ok {
			return nil
		}
		out[t] = c
	}
	return out
}

// sameCondition reports whether two conditions of one type hold the same status: as
// apimachinery's meta.SetStatusCondition and library-go's condition helpers decide, a new
// reason or message is no transition (the time stays), a new status is.
func sameCondition(a, b map[string]any) bool {
	x, _ := a["status"].(string)
	y, _ := b["status"].(string)
	return x == y
}

// listKind is how the API compares the items of a list.
type listKind int

const (
	// listAtomic: item by item, in order.
	listAtomic listKind = iota
	// listSet: a set of scalars (x-kubernetes-list-type: set), in any order.
	listSet
	// listMap: objects keyed by the fields in listKeys (x-kubernetes-list-type: map), in
	// any order.
	listMap
)

// listShape is the kind of one list, and its key fields for listMap.
type listShape struct {
	kind listKind
	keys []string
}

// listShapes learns from live's managedFields which lists the API treats as sets or maps:
// a managedFields path that enters a list by value (v:) or by key (k:) is a set or a map.
// Only lists reached by field names from the object's root are recorded (not lists nested in
// list items). Condition lists of the status (status.conditions) are maps keyed by type
// whatever the managedFields say.
func listShapes(live *unstructured.Unstructured) map[string]listShape {
	out := map[string]listShape{}
	if live == nil {
		return out
	}
	for _, mf := range live.GetManagedFields() {
		if mf.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
			continue
		}
		set.Iterate(func(p fieldpath.Path) {
			var names []string
			for _, pe := range p {
				switch {
				case pe.FieldName != nil:
					names = append(names, *pe.FieldName)
					continue
				case pe.Value != nil:
					out[listPath(names)] = listShape{kind: listSet}
				case pe.Key != nil:
					keys := make([]string, 0, len(*pe.Key))
					for _, f := range *pe.Key {
						keys = append(keys, f.Name)
					}
					out[listPath(names)] = listShape{kind: listMap, keys: keys}
				}
				return
			}
		})
	}
	out[listPath([]string{"status", "conditions"})] = listShape{kind: listMap, keys: []string{"type"}}
	return out
}

// listPath is the key of a list reached by field names in listShapes.
func listPath(names []string) string { return strings.Join(names, "\x00") }

// keysOwned returns, for each list keyed by fields that mf (one manager's managedFields
// entry; nil for none) reaches by field names from the object's root, the keys of the items
// it owns, as managedFields print them (k:{"port":443,"protocol":"TCP"}): the keys the
// server recorded after defaulting what that manager wrote.
func keysOwned(mf *metav1.ManagedFieldsEntry) map[string]map[string]bool {
	if mf == nil || mf.FieldsV1 == nil {
		return nil
	}
	set := &fieldpath.Set{}
	if err := set.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
		return nil
	}
	out := map[string]map[string]bool{}
	set.Iterate(func(p fieldpath.Path) {
		var names []string
		for _, pe := range p {
			if pe.FieldName != nil {
				names = append(names, *pe.FieldName)
				continue
			}
			if pe.Key != nil {
				lp := listPath(names)
				if out[lp] == nil {
					out[lp] = map[string]bool{}
				}
				out[lp][pe.String()] = true
			}
			return
		}
	})
	return out
}

// itemKey is the managedFields form of the key of a list item (keysOwned); "" when the item
// lacks a key field or is not an object.
func itemKey(item any, keys []string) string {
	m, ok := item.(map[string]any)
	if !ok {
		return ""
	}
	fl := make(value.FieldList, 0, len(keys))
	for _, k := range keys {
		v, ok := m[k]
		if !ok {
			return ""
		}
		fl = append(fl, value.Field{Name: k, Value: value.NewValueInterface(v)})
	}
	fl.Sort()
	return fieldpath.PathElement{Key: &fl}.String()
}

// comparer is subset with the list shapes of the live object, and the item keys of the
// keyed lists that the writing manager owns (ownKeys, from keysOwned; nil for none).
type comparer struct {
	shapes  map[string]listShape
	ownKeys map[string]map[string]bool
}

// subset reports whether every field of want holds the same value in have (see subset);
// lists that shapes names as sets or maps match in any order. path is the field names from
// the root, nil inside list items (whose lists are compared in order).
func (c comparer) subset(want, have any, path []string, rooted bool) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range w {
			hv, ok := h[k]
			if !ok {
				if v == nil {
					continue
				}
				return false
			}
			var sub []string
			if rooted {
				sub = append(append(make([]string, 0, len(path)+1), path...), k)
			}
			if !c.subset(v, hv, sub, rooted) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok {
			return false
		}
		shape := listShape{}
		if rooted {
			shape = c.shapes[listPath(path)]
		}
		// The items of a set or a map are owned one by one: what want holds must be in have,
		// the others are someone else's (a field manager's own items that want dropped are
		// AppliedNoOp's ownedHeld, and UpdatedNoOp's, to find). An atomic list is one value.
		switch shape.kind {
		case listSet:
			return len(w) <= len(h) && c.matchUnordered(w, h, func(a, b any) bool { return scalarEqual(a, b) })
		case listMap:
			owned := c.ownKeys[listPath(path)]
			return len(w) <= len(h) && c.matchUnordered(w, h, func(a, b any) bool {
				return (sameKeys(a, b, shape.keys) || defaultedKeys(a, b, shape.keys, owned)) && c.subset(a, b, nil, false)
			})
		}
		if len(h) != len(w) {
			return false
		}
		for i := range w {
			if !c.subset(w[i], h[i], nil, false) {
				return false
			}
		}
		return true
	}
	return scalarEqual(want, have)
}

// matchUnordered reports whether every item of want matches a distinct item of have.
func (c comparer) matchUnordered(want, have []any, match func(w, h any) bool) bool {
	used := make([]bool, len(have))
	for _, w := range want {
		found := false
		for j, h := range have {
			if !used[j] && match(w, h) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// defaultedKeys reports whether want, a list item that leaves some key fields out, is the
// live item have as the server defaulted it: the key fields want sets hold the same values
// in have, and have's whole key is one the writing manager owns (owned, from keysOwned).
func defaultedKeys(want, have any, keys []string, owned map[string]bool) bool {
	w, ok := want.(map[string]any)
	if !ok || len(owned) == 0 || !owned[itemKey(have, keys)] {
		return false
	}
	h, _ := have.(map[string]any)
	for _, k := range keys {
		if wv, ok := w[k]; ok && !scalarEqual(wv, h[k]) {
			return false
		}
	}
	return true
}

// sameKeys reports whether two list items hold the same values of the key fields.
func sameKeys(a, b any, keys []string) bool {
	x, ok := a.(map[string]any)
	if !ok {
		return false
	}
	y, ok := b.(map[string]any)
	if !ok {
		return false
	}
	for _, k := range keys {
		xv, xok := x[k]
		yv, yok := y[k]
		if xok != yok || (xok && !scalarEqual(xv, yv)) {
			return false
		}
	}
	return true
}
