package translate

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/topolayer/topolayer/translate/podsecurity"

	"github.com/topolayer/topolayer/translate/internal/yamlnode"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"sigs.k8s.io/kustomize/api/filters/patchjson6902"
	"sigs.k8s.io/kustomize/api/filters/patchstrategicmerge"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

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
	// Filter returns the kio.Filter that changes one object.
	Filter func(Context) (kio.Filter, error)
	// Strips says the transform removes or overrides what the operator wrote to contain it
	// (privileges, host access). A policy whose PodSecurity is PodSecurityReject runs no
	// stripping transform: what would need one is refused instead.
	Strips bool
	// RemovesOwnerReferences says the transform may remove metadata.ownerReferences, the one
	// identity field a transform may change (RuleIdentityFields): the management cluster
	// does not keep the operator's owners.
	RemovesOwnerReferences bool
}

// Patch is a user-written transform: a strategic-merge patch or a JSON 6902 patch, applied
// with kustomize's patch filters to the objects its match selects.
type Patch struct {
	// Name identifies the patch in plans.
	Name string `json:"name"`
	// Cluster restricts the patch to one target cluster; "" for any.
	Cluster string `json:"cluster,omitempty"`
	// Match selects the objects.
	Match routing.Match `json:"match"`
	// StrategicMerge is a strategic-merge patch, as YAML.
	StrategicMerge string `json:"strategicMerge,omitempty"`
	// JSON6902 is a list of JSON patch operations, as YAML or JSON.
	JSON6902 string `json:"json6902,omitempty"`
}

// Transform compiles the patch, checking that it parses.
func (p Patch) Transform() (Transform, error) {
	var filter kio.Filter
	switch {
	case p.StrategicMerge != "" && p.JSON6902 != "":
		return Transform{}, errors.New("set strategicMerge or json6902, not both")
	case p.StrategicMerge != "":
		node, err := yaml.Parse(p.StrategicMerge)
		if err != nil {
			return Transform{}, fmt.Errorf("strategicMerge: %w", err)
		}
		if node.YNode().Kind != yaml.MappingNode {
			return Transform{}, errors.New("strategicMerge: not a YAML mapping")
		}
		filter = patchstrategicmerge.Filter{Patch: node}
	case p.JSON6902 != "":
		js, err := sigsyaml.YAMLToJSON([]byte(p.JSON6902))
		if err != nil {
			return Transform{}, fmt.Errorf("json6902: %w", err)
		}
		ops, err := jsonpatch.DecodePatch(js)
		if err != nil {
			return Transform{}, fmt.Errorf("json6902: %w", err)
		}
		for i, op := range ops {
			switch op.Kind() {
			case "add", "remove", "replace", "move", "copy", "test":
			default:
				return Transform{}, fmt.Errorf("json6902[%d].op: %q is not add, remove, replace, move, copy or test", i, op.Kind())
			}
			if _, err := op.Path(); err != nil {
				return Transform{}, fmt.Errorf("json6902[%d].path: %w", i, err)
			}
		}
		filter = patchjson6902.Filter{Patch: string(js)}
	default:
		return Transform{}, errors.New("set strategicMerge or json6902")
	}
	return Transform{Name: p.Name, Cluster: p.Cluster, Match: p.Match, Filter: func(Context) (kio.Filter, error) {
		if smp, ok := filter.(patchstrategicmerge.Filter); ok {
			// The merge may move the patch's nodes into the object: each object gets a copy,
			// so that no two objects (or two plans' goroutines) share them.
			return patchstrategicmerge.Filter{Patch: smp.Patch.Copy()}, nil
		}
		return filter, nil
	}}, nil
}

// podTemplatePaths says where the pod template of each workload kind is.
var podTemplatePaths = map[string][]string{
	"deployments":  {"spec", "template"},
	"statefulsets": {"spec", "template"},
	"daemonsets":   {"spec", "template"},
	"replicasets":  {"spec", "template"},
	"jobs":         {"spec", "template"},
	"cronjobs":     {"spec", "jobTemplate", "spec", "template"},
	"pods":         {},
}

var workloadGroups = map[string]string{
	"pods":        "",
	"deployments": "apps", "statefulsets": "apps", "daemonsets": "apps", "replicasets": "apps",
	"jobs": "batch", "cronjobs": "batch",
}

// AnnotationOwnerHCP is how plans made before the management target owned its objects
// asked the applier for an ownerReference to the named HostedControlPlane. Nothing sets it
// any more; the inverse placement and the applier strip it from old objects.
const AnnotationOwnerHCP = "topolayer.dev/owner-hosted-control-plane"

// PodTemplatePath returns where the pod template of a workload resource is (empty for a
// bare Pod); false for a resource that bears no pods.
func PodTemplatePath(resource string) ([]string, bool) {
	p, ok := podTemplatePaths[resource]
	return slices.Clone(p), ok
}

// WorkloadGroup returns the API group of a pod-bearing resource (PodBearingResources).
func WorkloadGroup(resource string) string { return workloadGroups[resource] }

// DropOwnerReferences removes metadata.ownerReferences. A transform that runs it says so
// (Transform.RemovesOwnerReferences): the check of identity fields lets it through.
type DropOwnerReferences struct{}

var _ kio.Filter = DropOwnerReferences{}

// scope implements scopedFilter.
func (DropOwnerReferences) scope(obj *yaml.Node) ([]string, []string, func(), bool) {
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

var _ kio.Filter = podsecurity.DropHostPathVolumes{}

// AddLabels sets labels on an object and on its pod template.
type AddLabels struct {
	// PodTemplatePath is the path of the pod template; empty for objects without one.
	PodTemplatePath []string `json:"podTemplatePath,omitempty"`
	// Labels are set, overwriting existing values.
	Labels map[string]string `json:"labels"`
}

var _ kio.Filter = AddLabels{}

// Filter implements kio.Filter.
func (f AddLabels) Filter(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	return kio.FilterAll(yaml.FilterFunc(func(o *yaml.RNode) (*yaml.RNode, error) {
		for _, k := range slices.Sorted(maps.Keys(f.Labels)) { // deterministic output
			if err := yamlnode.SetMetadataString(o, "labels", k, f.Labels[k]); err != nil {
				return nil, fmt.Errorf("set label %q: %w", k, err)
			}
			if len(f.PodTemplatePath) == 0 {
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

// selects reports whether a transform applies to an entry placed on cluster.
func (t Transform) selects(o routing.Object, cluster string) bool {
	return (t.Cluster == "" || t.Cluster == cluster) && t.Match.Matches(o)
}
