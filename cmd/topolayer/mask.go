package main

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The masks of Secret values in diffs, kubectl diff's: a value is never shown, and a key
// whose value changes shows it changed.
const (
	secretMask       = "***"
	secretMaskBefore = "*** (before)"
	secretMaskAfter  = "*** (after)"
)

// maskSecrets returns copies of live and would in which, when they are core Secrets, every
// value of data and stringData is replaced by a mask, as kubectl diff does: the keys stay,
// an unchanged value is "***" on both sides and a changed one "*** (before)" and
// "*** (after)", so that a diff shows which keys were added, removed or changed and nothing
// of their values. Other objects are returned as they are.
func maskSecrets(live, would *unstructured.Unstructured) (*unstructured.Unstructured, *unstructured.Unstructured) {
	if !isSecret(live) && !isSecret(would) {
		return live, would
	}
	if live != nil {
		live = live.DeepCopy()
	}
	if would != nil {
		would = would.DeepCopy()
	}
	for _, field := range []string{"data", "stringData"} {
		from, to := secretValues(live, field), secretValues(would, field)
		for k, v := range from {
			w, both := to[k]
			switch {
			case both && !equalValue(v, w):
				from[k], to[k] = secretMaskBefore, secretMaskAfter
			case both:
				from[k], to[k] = secretMask, secretMask
			default:
				from[k] = secretMask
			}
		}
		for k := range to {
			if _, both := from[k]; !both {
				to[k] = secretMask
			}
		}
	}
	return live, would
}

// isSecret reports whether obj is a core Secret.
func isSecret(obj *unstructured.Unstructured) bool {
	return obj != nil && obj.GetAPIVersion() == "v1" && obj.GetKind() == "Secret"
}

// secretValues returns the map under field of obj, to be masked in place; nil when absent.
func secretValues(obj *unstructured.Unstructured, field string) map[string]any {
	if obj == nil {
		return nil
	}
	m, _ := obj.Object[field].(map[string]any)
	return m
}

// equalValue compares two values of a Secret's data: strings, or anything else unequal.
func equalValue(a, b any) bool {
	sa, okA := a.(string)
	sb, okB := b.(string)
	return okA && okB && sa == sb
}
