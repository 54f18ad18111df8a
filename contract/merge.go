package contract

import (
	"reflect"
	"slices"
)

// MergeInputResources returns the union of two input-resources documents, a then what b
// adds; entries b repeats are kept once. Either may be nil; the result is new (nil when
// both are).
func MergeInputResources(a, b *InputResources) *InputResources {
	if a == nil && b == nil {
		return nil
	}
	var out InputResources
	for _, in := range []*InputResources{a, b} {
		if in == nil {
			continue
		}
		mergeResourceList(&out.ApplyConfigurationResources, in.ApplyConfigurationResources)
		mergeResourceList(&out.OperandResources.ConfigurationResources, in.OperandResources.ConfigurationResources)
		mergeResourceList(&out.OperandResources.ManagementResources, in.OperandResources.ManagementResources)
		mergeResourceList(&out.OperandResources.UserWorkloadResources, in.OperandResources.UserWorkloadResources)
	}
	return &out
}

// MergeOutputResources returns the union of two output-resources documents, class by
// class, a then what b adds. Either may be nil; the result is new (nil when both are).
func MergeOutputResources(a, b *OutputResources) *OutputResources {
	if a == nil && b == nil {
		return nil
	}
	var out OutputResources
	for _, o := range []*OutputResources{a, b} {
		if o == nil {
			continue
		}
		for _, c := range classes[:3] {
			to, from := out.ForClass(c), o.ForClass(c)
			to.EventingNamespaces = appendNew(to.EventingNamespaces, from.EventingNamespaces)
			to.ExactResources = appendNew(to.ExactResources, from.ExactResources)
			to.GeneratedNameResources = appendNew(to.GeneratedNameResources, from.GeneratedNameResources)
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
