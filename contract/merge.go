package contract

import (
	"reflect"
	"slices"
)

// MergeInputResources returns the union of two input-resources documents, a then what b
// adds; entries b repeats are kept once. Either may be nil; the result is new (nil when
// both are).
func MergeInputResources(a, b *InputResources) *InputResources {
	return union(a, b, func(out, in *InputResources) {
		mergeResourceList(&out.ApplyConfigurationResources, in.ApplyConfigurationResources)
		mergeResourceList(&out.OperandResources.ConfigurationResources, in.OperandResources.ConfigurationResources)
		mergeResourceList(&out.OperandResources.ManagementResources, in.OperandResources.ManagementResources)
		mergeResourceList(&out.OperandResources.UserWorkloadResources, in.OperandResources.UserWorkloadResources)
	})
}

// MergeOutputResources returns the union of two output-resources documents, class by
// class, a then what b adds. Either may be nil; the result is new (nil when both are).
func MergeOutputResources(a, b *OutputResources) *OutputResources {
	return union(a, b, func(out, o *OutputResources) {
		for _, c := range classes[:3] {
			to, from := out.ForClass(c), o.ForClass(c)
			to.EventingNamespaces = appendNew(to.EventingNamespaces, from.EventingNamespaces)
			to.ExactResources = appendNew(to.ExactResources, from.ExactResources)
			to.GeneratedNameResources = appendNew(to.GeneratedNameResources, from.GeneratedNameResources)
		}
	})
}

// union is the merge of two documents of one kind: nil when both are nil, else a new
// document that add fills from a, then from b (each that is not nil).
func union[T any](a, b *T, add func(out, in *T)) *T {
	if a == nil && b == nil {
		return nil
	}
	var out T
	for _, in := range []*T{a, b} {
		if in != nil {
			add(&out, in)
		}
	}
	return &out
}

func mergeResourceList(to *ResourceList, from ResourceList) {
	to.ExactResources = appendNew(to.ExactResources, from.ExactResources)
	to.GeneratedNameResources = appendNew(to.GeneratedNameResources, from.GeneratedNameResources)
	for _, s := range from.LabelSelectedResources {
		if !slices.ContainsFunc(to.LabelSelectedResources, func(x LabelSelectedResource) bool { return reflect.DeepEqual(x, s) }) {
			to.LabelSelectedResources = append(to.LabelSelectedResources, s)
		}
	}
	for _, r := range from.ResourceReferences {
		if !slices.ContainsFunc(to.ResourceReferences, func(x ResourceReference) bool { return reflect.DeepEqual(x, r) }) {
			to.ResourceReferences = append(to.ResourceReferences, r)
		}
	}
}

// appendNew appends the elements of from that to does not hold yet.
func appendNew[T comparable](to, from []T) []T {
	for _, x := range from {
		if !slices.Contains(to, x) {
			to = append(to, x)
		}
	}
	return to
}
