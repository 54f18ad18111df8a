package transform

import (
	"fmt"
	"maps"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/routing"
)

// Context is what a transform may know about the object it changes.
type Context struct {
	// Source is the object's standalone identity.
	Source routing.Object
	// Cluster is the target cluster.
	Cluster string
	// HCPNamespace and HostedControlPlane name the hosted control plane ("" when standalone).
	HCPNamespace, HostedControlPlane string
	// Operator names the operator that wrote the object.
	Operator string
}

// Transform is one declarative change to the object bodies its selectors pick. It runs after
// renaming and reference rewriting, on the object as it will land on its target.
type Transform struct {
	// Name identifies the transform in plans.
	Name string
	// Cluster restricts the transform to mutations placed on one cluster; "" for any.
	Cluster string
	// Match selects mutations by class, standalone identity and labels, as routing does.
	Match routing.Match
	// Filter returns the kio.Filter that changes one object; nil for a transform that only
	// Adds.
	Filter func(Context) (kio.Filter, error)
	// Adds, when set, returns an object the transform writes beside each object it selects,
	// in that object's standalone namespace, or nil for none: HyperShift's
	// PodDisruptionBudget of an API-critical workload. It reads the selected object as the
	// operator wrote it. The engine places the object where the selected one lands, unless
	// the plan writes one of that identity itself, and rewrites it with every stage, as it
	// rewrites the operator's objects; the entry names the transform as its rule.
	Adds func(c Context, obj *yaml.RNode) (*yaml.RNode, error)
	// Strips says the transform removes or overrides what the operator wrote to contain it
	// (privileges, host access). A policy whose PodSecurity is PodSecurityReject runs no
	// stripping transform: what would need one is refused instead.
	Strips bool
	// RemovesOwnerReferences says the transform may remove metadata.ownerReferences, the one
	// identity field a transform may change (RuleIdentityFields): the management cluster
	// does not keep the operator's owners.
	RemovesOwnerReferences bool
	// Applies, when set, narrows the transform further to the objects it returns true for,
	// as the stages before it left them (the profile's pod-spec edits of kinds it does not
	// name: objects in which package podspec finds a pod spec).
	Applies func(obj *yaml.RNode) bool
}

// Selects reports whether a transform applies to an entry placed on cluster.
func (t Transform) Selects(o routing.Object, cluster string) bool {
	return (t.Cluster == "" || t.Cluster == cluster) && t.Match.Matches(o)
}

// Scoped is a transform's filter that, on a given object, changes only some keys of one
// mapping (and may create that mapping and its parents, holding nothing else): the engine
// copies and diffs those keys' values around the edit, not the object.
type Scoped interface {
	// scope returns the mapping's path, the keys, and the edit that makes on obj what Filter
	// makes; false when the filter may change obj elsewhere (the engine runs Filter).
	Scope(obj *yaml.Node) (path, keys []string, edit func(), ok bool)
}

// DropOwnerReferences removes metadata.ownerReferences. A transform that runs it says so
// (Transform.RemovesOwnerReferences): the check of identity fields lets it through.
type DropOwnerReferences struct{}

// Scope implements Scoped.
func (DropOwnerReferences) Scope(obj *yaml.Node) ([]string, []string, func(), bool) {
	meta := yamlnode.MappingValue(obj, "metadata")
	if meta == nil || meta.Kind != yaml.MappingNode {
		return nil, nil, nil, false // Filter says what it makes of it
	}
	return []string{"metadata"}, []string{"ownerReferences"}, func() { yamlnode.RemoveField(meta, "ownerReferences") }, true
}

// Filter implements kio.Filter.
func (DropOwnerReferences) Filter(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	return kio.FilterAll(yaml.FilterFunc(func(o *yaml.RNode) (*yaml.RNode, error) {
		return o, yamlnode.ClearIf(o, "ownerReferences", nil, "metadata")
	})).Filter(objs)
}

// AddLabels sets labels on the pods an object makes: on its pod template when it has one (a
// workload's own labels are left as they are, as HyperShift labels only its components'
// pods), else on the object itself (a bare Pod).
type AddLabels struct {
	// PodTemplatePath is the path of the pod template; empty for objects without one.
	PodTemplatePath []string `json:"podTemplatePath,omitempty"`
	// Labels are set, overwriting existing values.
	Labels map[string]string `json:"labels"`
}

// Filter implements kio.Filter.
func (f AddLabels) Filter(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	return kio.FilterAll(yaml.FilterFunc(func(o *yaml.RNode) (*yaml.RNode, error) {
		for _, k := range slices.Sorted(maps.Keys(f.Labels)) { // deterministic output
			if len(f.PodTemplatePath) == 0 {
				if err := yamlnode.SetMetadataString(o, "labels", k, f.Labels[k]); err != nil {
					return nil, fmt.Errorf("set label %q: %w", k, err)
				}
				continue
			}
			// As LookupCreate of the template's labels, then SetField.
			path := append(slices.Clone(f.PodTemplatePath), "metadata", "labels", k)
			if err := yamlnode.SetString(o, yaml.NewStringRNode(f.Labels[k]).YNode(), path...); err != nil {
				return nil, err
			}
		}
		return o, nil
	})).Filter(objs)
}
