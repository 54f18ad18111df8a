package podspec

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/namespaces"
)

// KnownPodBearing reports whether group and resource are a built-in pod-bearing kind's
// (Known): pods, podtemplates, replicationcontrollers and the workloads.
func KnownPodBearing(group, resource string) bool {
	// Asked for every object of a plan: the kinds are read in place, without a copy.
	n := len(resource) - 1
	for gk := range known {
		if gk.Group == group && n == len(gk.Kind) && resource[n] == 's' && lowerOf(gk.Kind, resource[:n]) {
			return true
		}
	}
	return false
}

// RunsPods reports whether an object of kind gk, written to a target of group, may make pods
// run: a kind that may hold pod specs (MayHold), unless it is a shadow copy
// (namespaces.IsShadowGroup), which topolayer keeps for the operator to read and nothing runs.
func RunsPods(group string, gk schema.GroupKind) bool {
	if _, shadow := namespaces.IsShadowGroup(group); shadow {
		return false
	}
	if _, shadow := namespaces.IsShadowGroup(gk.Group); shadow {
		return false
	}
	return MayHold(gk)
}

// SitesOf returns the pod specs of an unstructured object (Find); none for a
// shadow copy (RunsPods).
func SitesOf(obj *unstructured.Unstructured) ([]Site, error) {
	gk := obj.GroupVersionKind().GroupKind()
	if !RunsPods(gk.Group, gk) {
		return nil, nil
	}
	return Find(gk, obj.Object)
}

// SitesIn returns the pod specs of obj, a YAML tree (FindNode); none for a shadow copy
// (RunsPods).
func SitesIn(obj *yaml.RNode) ([]Site, error) {
	gk := schema.FromAPIVersionAndKind(obj.GetApiVersion(), obj.GetKind()).GroupKind()
	if !RunsPods(gk.Group, gk) {
		return nil, nil
	}
	return FindNode(gk, obj.YNode())
}

// lowerOf reports whether s is kind in lower case (strings.ToLower(kind) == s, for the ASCII
// names of kinds), without building the lower-case string.
func lowerOf(kind, s string) bool {
	if len(kind) != len(s) {
		return false
	}
	for i := 0; i < len(kind); i++ {
		c := kind[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}
