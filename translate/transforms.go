package translate

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

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

// HyperShift profile names and the labels and tolerations it adds.
const (
	ProfileHyperShift = "hypershift"

	LabelHostedControlPlane    = "hypershift.openshift.io/hosted-control-plane"
	LabelControlPlaneComponent = "hypershift.openshift.io/control-plane-component"
	TaintControlPlane          = "hypershift.openshift.io/control-plane"
	TaintCluster               = "hypershift.openshift.io/cluster"
	PriorityClassControlPlane  = "hypershift-control-plane"
	PullSecretName             = "pull-secret"
	// AnnotationOwnerHCP is how plans made before the management target owned its objects
	// asked the applier for an ownerReference to the named HostedControlPlane. Nothing sets
	// it any more; the inverse placement and the applier strip it from old objects.
	AnnotationOwnerHCP = "topolayer.dev/owner-hosted-control-plane"
)

// Profiles are the built-in transform sets, by name.
var Profiles = map[string]func() []Transform{
	ProfileHyperShift: HyperShiftProfile,
}

// ProfileNames lists the built-in profiles.
func ProfileNames() []string { return slices.Sorted(maps.Keys(Profiles)) }

// HyperShiftProfile is the generic set of changes a standalone workload needs to run as part
// of a hosted control plane, for every workload kind placed on the management cluster: its
// standalone scheduling (nodeSelector, tolerations, affinity, priority class) and host-path
// volumes go; the control-plane labels, tolerations, priority class and pull secret come.
// Containment: every pod template and bare Pod is brought to Pod Security "restricted" by
// named transforms: drop-host-path-volumes, drop-host-namespaces, drop-host-ports,
// drop-node-name, drop-privilege and drop-unsafe-security-overrides strip (Transform.Strips)
// what only a standalone node allows; restricted-security-context adds what restricted needs.
// drop-owner-references removes the operator's ownerReferences from every management object.
// The ownerReference to the HostedControlPlane is not a transform: the management target
// adds it (apply.Options.HostedControlPlane).
func HyperShiftProfile() []Transform {
	var out []Transform
	for _, resource := range slices.Sorted(maps.Keys(podTemplatePaths)) {
		group, path := workloadGroups[resource], podTemplatePaths[resource]
		match := routing.Match{Group: &group, Resource: resource}
		addT := func(name string, strips bool, f func(Context) (kio.Filter, error)) {
			out = append(out, Transform{Name: ProfileHyperShift + "/" + name, Cluster: routing.ClusterManagement, Match: match, Filter: f, Strips: strips})
		}
		add := func(name string, f func(Context) (kio.Filter, error)) { addT(name, false, f) }
		add("drop-standalone-scheduling", constEdit(path, map[string]any{"nodeSelector": nil, "tolerations": nil, "affinity": nil, "priorityClassName": nil}))
		addT("drop-host-path-volumes", true, func(Context) (kio.Filter, error) { return DropHostPathVolumes{PodTemplatePath: path}, nil })
		for _, t := range podSecurityTransforms() {
			addT(t.name, t.strips, func(Context) (kio.Filter, error) {
				return PodSecurityFilter{PodTemplatePath: path, Edit: t.edit}, nil
			})
		}
		add("control-plane-labels", func(c Context) (kio.Filter, error) {
			return AddLabels{PodTemplatePath: path, Labels: map[string]string{
				LabelHostedControlPlane:    c.HCPNamespace,
				LabelControlPlaneComponent: c.Source.Identity.Name,
			}}, nil
		})
		var scheduling sync.Map // hosted control plane namespace -> podSpecEdit
		add("control-plane-scheduling", func(c Context) (kio.Filter, error) {
			if e, ok := scheduling.Load(c.HCPNamespace); ok {
				return e.(podSpecEdit), nil
			}
			e, err := newPodSpecEdit(path, map[string]any{
				"priorityClassName": PriorityClassControlPlane,
				"tolerations": []any{
					map[string]any{"key": TaintControlPlane, "operator": "Equal", "value": "true", "effect": "NoSchedule"},
					map[string]any{"key": TaintCluster, "operator": "Equal", "value": c.HCPNamespace, "effect": "NoSchedule"},
				},
			})
			if err != nil {
				return nil, err
			}
			scheduling.Store(c.HCPNamespace, e)
			return e, nil
		})
		add("pull-secret", constEdit(path, map[string]any{"imagePullSecrets": []any{map[string]any{"name": PullSecretName}}}))
	}
	out = append(out, Transform{Name: ProfileHyperShift + "/drop-owner-references", Cluster: routing.ClusterManagement, Strips: false,
		Filter: func(Context) (kio.Filter, error) { return dropOwnerReferences{}, nil }})
	return out
}

// dropOwnerReferences removes metadata.ownerReferences: on the management cluster the
// operator's owners (its standalone objects) are not the owners, the management target adds
// the HostedControlPlane one itself, and an ownerReference to another tenant's object would
// tie the object's lifetime to it.
type dropOwnerReferences struct{}

// scope implements scopedFilter.
func (dropOwnerReferences) scope(obj *yaml.Node) ([]string, []string, func(), bool) {
	meta := mappingValue(obj, "metadata")
	if meta == nil || meta.Kind != yaml.MappingNode {
		return nil, nil, nil, false // Filter says what it makes of it
	}
	return []string{"metadata"}, []string{"ownerReferences"}, func() { removeField(meta, "ownerReferences") }, true
}

func (dropOwnerReferences) Filter(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	return kio.FilterAll(yaml.FilterFunc(func(o *yaml.RNode) (*yaml.RNode, error) {
		return o, clearIf(o, "ownerReferences", nil, "metadata")
	})).Filter(objs)
}

// constEdit returns the filter of a transform that makes the same pod spec edit on every
// object, built once.
func constEdit(path []string, spec map[string]any) func(Context) (kio.Filter, error) {
	e, err := newPodSpecEdit(path, spec)
	return func(Context) (kio.Filter, error) { return e, err }
}

// DropHostPathVolumes removes the hostPath volumes of a pod template and every container's
// mounts of them, so that the API server still accepts the object.
type DropHostPathVolumes struct {
	// PodTemplatePath is the path of the pod template in the object.
	PodTemplatePath []string `json:"podTemplatePath"`
}

var _ kio.Filter = DropHostPathVolumes{}

// Filter implements kio.Filter.
func (f DropHostPathVolumes) Filter(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	return PodSecurityFilter{PodTemplatePath: f.PodTemplatePath, Edit: func(_, spec *yaml.RNode) error {
		return dropHostPathVolumes(spec)
	}}.Filter(objs)
}

// dropHostPathVolumes removes the hostPath volumes of a pod spec and the containers' and
// init containers' mounts of them.
func dropHostPathVolumes(spec *yaml.RNode) error {
	volumes, err := lookup(spec, "volumes")
	if err != nil || volumes == nil {
		return err
	}
	dropped := map[string]bool{}
	elems, err := volumes.Elements()
	if err != nil {
		return err
	}
	for _, v := range elems {
		if v.Field("hostPath") != nil {
			dropped[yaml.GetValue(v.Field("name").Value)] = true
		}
	}
	if len(dropped) == 0 {
		return nil
	}
	if err := keepElements(volumes, func(e *yaml.RNode) bool { return !dropped[fieldString(e, "name")] }); err != nil {
		return err
	}
	for _, list := range []string{"containers", "initContainers"} {
		containers, err := lookup(spec, list)
		if err != nil || containers == nil {
			continue
		}
		cs, err := containers.Elements()
		if err != nil {
			return err
		}
		for _, c := range cs {
			mounts, err := lookup(c, "volumeMounts")
			if err != nil || mounts == nil {
				continue
			}
			if err := keepElements(mounts, func(e *yaml.RNode) bool { return !dropped[fieldString(e, "name")] }); err != nil {
				return err
			}
		}
	}
	return nil
}

func fieldString(n *yaml.RNode, field string) string {
	f := n.Field(field)
	if f == nil || f.Value == nil {
		return ""
	}
	return yaml.GetValue(f.Value)
}

// keepElements keeps the elements of a sequence node for which keep is true.
func keepElements(seq *yaml.RNode, keep func(*yaml.RNode) bool) error {
	elems, err := seq.Elements()
	if err != nil {
		return err
	}
	var kept []*yaml.Node
	for _, e := range elems {
		if keep(e) {
			kept = append(kept, e.YNode())
		}
	}
	seq.YNode().Content = kept
	return nil
}

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
			if err := setMetadataString(o, "labels", k, f.Labels[k]); err != nil {
				return nil, fmt.Errorf("set label %q: %w", k, err)
			}
			if len(f.PodTemplatePath) == 0 {
				continue
			}
			// As LookupCreate of the template's labels, then SetField.
			path := append(slices.Clone(f.PodTemplatePath), "metadata", "labels", k)
			if err := setString(o, yaml.NewStringRNode(f.Labels[k]).YNode(), path...); err != nil {
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
