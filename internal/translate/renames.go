package translate

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/references"
	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/routing"
)

var _ references.Renamer = (*renamer)(nil)

// Rename answers where a referenced standalone object lands, for references.RewriteReferences.
func (r *renamer) Rename(ref references.Reference) (references.Renamed, bool) {
	target, _, ok := r.resolve(ref.Kind, ref.Namespace, ref.Name)
	if !ok {
		return references.Renamed{}, false
	}
	return renamedAs(r.engine.Discovery, ref.Kind, target), true
}

// renamedAs is where a reference to an object of kind lands when the object becomes
// target: its namespace and name, and its kind when target is of another resource than
// kind's (a ClusterRole placed as a Role).
func renamedAs(d *contract.Discovery, kind schema.GroupKind, target contract.Identity) references.Renamed {
	out := references.Renamed{Namespace: target.Namespace, Name: target.Name}
	if resource, _ := d.ResourceForKind(kind); resource != target.Resource {
		if k, ok := d.KindForResource(target.GroupResource()); ok {
			out.Kind = k
		}
	}
	return out
}

// rewriteReferences rewrites the references inside obj with the table of references; what the
// renamer cannot place is left as it is (and reported by the renamer where it matters).
func rewriteReferences(obj *yaml.RNode, r *renamer) error {
	_, _, err := references.RewriteReferences(obj, r)
	return err
}

// renamer answers, for a reference inside one object, where the referenced object lands.
type renamer struct {
	engine Engine
	index  map[objectKey]placed
	// outside remembers where the objects outside the plan that references name are
	// expected (objectKey -> outsideTarget): many objects name the same ones. nil for none.
	outside  *sync.Map
	from     string            // the referrer's target cluster
	referrer contract.Identity // the referrer's standalone identity
	warnings []string
	// simulated are the standalone namespaces the plan simulates on the referrer's cluster;
	// built when first needed (simulatesNamespace).
	simulated map[string]bool
}

// resolve returns the target identity of a referenced standalone object, renaming by the
// topology's rules objects the plan does not contain, and warning about those.
func (r *renamer) resolve(gk schema.GroupKind, namespace, name string) (contract.Identity, string, bool) {
	resource, ok := r.engine.Discovery.ResourceForKind(gk)
	if !ok {
		return contract.Identity{}, "", false
	}
	src := contract.Identity{Group: gk.Group, Resource: resource, Namespace: namespace, Name: name}
	if p, ok := r.index[keyOf(onCluster+r.from, src)]; ok {
		return p.target, p.cluster, true
	}
	if p, ok := r.index[keyOf("", src)]; ok {
		if p.cluster != r.from {
			r.warn(fmt.Sprintf("refers to %s, which lands on the %s cluster, not the %s cluster", src, p.cluster, r.from))
			return contract.Identity{}, "", false
		}
		return p.target, p.cluster, true
	}
	if r.from != routing.ClusterManagement {
		return contract.Identity{}, "", false // only the management side renames
	}
	if namespace == "" {
		if _, known := r.engine.Discovery.Namespaced(src.GroupResource()); known {
			return contract.Identity{}, "", false // a cluster-scoped object outside the plan keeps its name
		}
	}
	if target, ok := r.everyNamespace(src); ok {
		return target, r.from, true
	}
	t := r.outsideTarget(src)
	r.warn(t.warning)
	if t.err != nil {
		return contract.Identity{}, "", false
	}
	return t.target, r.from, true
}

func (r *renamer) warn(msg string) {
	if !slices.Contains(r.warnings, msg) {
		r.warnings = append(r.warnings, msg)
	}
}

// rewriteInvolvedObject renames an event's references with the engine's renamer, and
// returns the changes it made.
func rewriteInvolvedObject(obj *yaml.RNode, r *renamer, eventNamespace string) ([]plans.Change, error) {
	return rewriteEventReferences(obj, r.engine.Discovery, func(gk schema.GroupKind, namespace, name string) (contract.Identity, bool) {
		target, _, ok := r.resolve(gk, namespace, name)
		return target, ok
	}, eventNamespace)
}

// eventReferenceFields are the fields of an event that name an object.
var eventReferenceFields = []string{"involvedObject", "regarding", "related"}

// rewriteEventReferences renames an event's involvedObject (core) or regarding and related
// (events.k8s.io) with resolve, which returns the target identity of the object a reference
// names (false when it knows none), and returns the changes it made (path, from, to), in the
// order a diff of the object before and after lists them. A reference without apiVersion is
// resolved by its kind when one group of discovery has it. The API server requires
// involvedObject.namespace to be the event's own namespace, so a namespaced reference that
// cannot be resolved still follows the event into eventNamespace.
func rewriteEventReferences(obj *yaml.RNode, discovery *contract.Discovery, resolve func(gk schema.GroupKind, namespace, name string) (contract.Identity, bool), eventNamespace string) ([]plans.Change, error) {
	var changes []plans.Change
	root := obj.YNode()
	var fields []string // in the object's order, as a diff walks them
	if root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(root.Content); i += 2 {
			if k := root.Content[i].Value; slices.Contains(eventReferenceFields, k) && !slices.Contains(fields, k) {
				fields = append(fields, k)
			}
		}
	}
	for _, field := range fields {
		ref := obj.Field(field)
		if ref == nil || ref.Value == nil || ref.Value.YNode().Kind != yaml.MappingNode {
			continue
		}
		kind, name, ns := yamlnode.FieldString(ref.Value, "kind"), yamlnode.FieldString(ref.Value, "name"), yamlnode.FieldString(ref.Value, "namespace")
		if kind == "" || name == "" {
			continue
		}
		apiVersion := yamlnode.FieldString(ref.Value, "apiVersion")
		gv, _ := schema.ParseGroupVersion(apiVersion)
		if apiVersion == "" {
			gv.Group, _ = discovery.GroupForKind(kind)
		}
		set := map[string]string{}
		if target, ok := resolve(schema.GroupKind{Group: gv.Group, Kind: kind}, ns, name); ok {
			set["name"] = target.Name
			if ns != "" || target.Namespace != "" {
				set["namespace"] = target.Namespace
			}
			if target.Group != gv.Group && apiVersion != "" {
				set["apiVersion"] = schema.GroupVersion{Group: target.Group, Version: gv.Version}.String()
			}
		} else if ns != "" && ns != eventNamespace {
			set["namespace"] = eventNamespace
		}
		m := ref.Value.YNode()
		made := map[string]plans.Change{}
		for _, k := range slices.Sorted(maps.Keys(set)) {
			old, v := yamlnode.MappingValueIn(m, k), yaml.NewStringRNode(set[k]).YNode()
			if !yamlnode.Equal(old, v) {
				made[k] = plans.Change{Path: yamlnode.Pointer([]string{field, k}), From: yamlnode.Value(old), To: set[k]}
			}
			if err := yamlnode.SetString(ref.Value, v, k); err != nil {
				return nil, err
			}
		}
		// The reference's keys are now the ones it had, in its order, then the ones it
		// gained (appended in the order set): the order a diff lists their changes in.
		for i := 0; i+1 < len(m.Content) && len(made) > 0; i += 2 {
			if c, ok := made[m.Content[i].Value]; ok {
				changes = append(changes, c)
				delete(made, m.Content[i].Value)
			}
		}
	}
	return changes, nil
}
