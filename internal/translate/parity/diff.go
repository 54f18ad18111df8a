package parity

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// segment is one step of a path into a JSON value: a map key (string) or a list index (int).
type segment = any

// change is one place where two JSON values differ: the smallest subtree that differs,
// where maps recurse key by key and lists of equal length index by index.
type change struct {
	path      []segment
	old, new  any
	hasOld    bool
	hasNew    bool
	fieldPath string
}

// diff lists the changes from a to b, in a stable order (map keys sorted).
func diff(a, b any) []change {
	var out []change
	walkDiff(nil, a, true, b, true, &out)
	return out
}

func walkDiff(path []segment, a any, hasA bool, b any, hasB bool, out *[]change) {
	// A map that one side lacks is compared key by key with an empty one, so that each key
	// it brings is a change of its own (each annotation may have another cause).
	if _, ok := b.(map[string]any); ok && !hasA {
		walkMaps(path, map[string]any{}, b.(map[string]any), out)
		return
	}
	if _, ok := a.(map[string]any); ok && !hasB {
		walkMaps(path, a.(map[string]any), map[string]any{}, out)
		return
	}
	if hasA && hasB {
		am, aok := a.(map[string]any)
		bm, bok := b.(map[string]any)
		if aok && bok {
			walkMaps(path, am, bm, out)
			return
		}
		al, aok := a.([]any)
		bl, bok := b.([]any)
		if aok && bok && len(al) == len(bl) {
			for i := range al {
				walkDiff(appendPath(path, i), al[i], true, bl[i], true, out)
			}
			return
		}
		if reflect.DeepEqual(a, b) {
			return
		}
	} else if !hasA && !hasB {
		return
	}
	*out = append(*out, change{path: path, old: a, new: b, hasOld: hasA, hasNew: hasB, fieldPath: formatPath(path)})
}

func walkMaps(path []segment, a, b map[string]any, out *[]change) {
	for _, k := range sortedUnion(a, b) {
		av, ina := a[k]
		bv, inb := b[k]
		walkDiff(appendPath(path, k), av, ina, bv, inb, out)
	}
}

func appendPath(path []segment, s segment) []segment {
	out := make([]segment, len(path), len(path)+1)
	copy(out, path)
	return append(out, s)
}

func sortedUnion(a, b map[string]any) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range []map[string]any{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// formatPath prints a path with apimachinery's field.Path: keys that are identifiers as
// fields, other keys (annotation and label names) in brackets, indexes in brackets.
func formatPath(path []segment) string {
	var p *field.Path
	for _, s := range path {
		switch s := s.(type) {
		case int:
			if p == nil {
				p = field.NewPath("")
			}
			p = p.Index(s)
		case string:
			switch {
			case p == nil && identifier(s):
				p = field.NewPath(s)
			case p == nil:
				p = field.NewPath("").Key(s)
			case identifier(s):
				p = p.Child(s)
			default:
				p = p.Key(s)
			}
		}
	}
	if p == nil {
		return "."
	}
	return p.String()
}

// ChildPath appends the map key k to a leaf path as the reports print it: ".k" where k is an
// identifier, "[k]" where it is not, and k alone at the root. internal/fixtureparity prints
// its leaf paths with it.
func ChildPath(path, k string) string {
	switch {
	case !identifier(k):
		return path + "[" + k + "]"
	case path == "":
		return k
	}
	return path + "." + k
}

// identifier reports whether s is printed as a field name (.s) rather than a key ([s]).
func identifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// lookup returns the value at path in v.
func lookup(v any, path []segment) (any, bool) {
	for _, s := range path {
		switch s := s.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[s]; !ok {
				return nil, false
			}
		case int:
			l, ok := v.([]any)
			if !ok || s >= len(l) {
				return nil, false
			}
			v = l[s]
		}
	}
	return v, true
}

// overlaps reports whether one path is a prefix of the other: a change at one touches the
// other.
func overlaps(a, b []segment) bool {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// render prints a JSON value for a difference line: strings as they are, the rest compactly.
func render(v any, has bool) string {
	if !has {
		return "(absent)"
	}
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case nil:
		return "null"
	}
	data, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(data)
}
