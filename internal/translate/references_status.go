package translate

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/yamlnode"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
)

// ByStatusReferences rewrites the entries of statusReferences (Change.By).
const ByStatusReferences = "status-references"

// StatusReference is a list in an object's status whose entries name objects by group,
// resource, namespace and name (openshift/api's configv1.ObjectReference and
// operatorv1.GenerationStatus).
type StatusReference struct {
	// Referrer is the kind of the object that holds the list; an empty Kind means every
	// kind of the group.
	Referrer schema.GroupKind
	// Path is where the list is; a "*" segment stands for every element of a list.
	Path []string
}

// statusReferences are the status lists the engine follows like fields of the reference
// table, in status writes (UpdateStatus, ApplyStatus, PatchStatus) and in whole objects:
// a ClusterOperator's relatedObjects (what must-gather and the console follow), an
// operator CR's generations (library-go's workload and static-pod controllers compare the
// generation of the Deployments and DaemonSets they name), and the relatedObjects of the
// cluster Ingress's componentRoutes (CAO's custom-route controller names its Route there).
// The componentRoutes' own namespace and name are not references: they match an entry of
// spec.componentRoutes, which the cluster's administrator wrote.
var statusReferences = []StatusReference{
	{Referrer: schema.GroupKind{Group: "config.openshift.io", Kind: "ClusterOperator"}, Path: []string{"status", "relatedObjects"}},
	{Referrer: schema.GroupKind{Group: "operator.openshift.io"}, Path: []string{"status", "generations"}},
	{Referrer: schema.GroupKind{Group: "config.openshift.io", Kind: "Ingress"}, Path: []string{"status", "componentRoutes", "*", "relatedObjects"}},
}

// holdsStatusReferences says whether objects of kind gk (a shadow group's, or its
// original's) have statusReferences.
func holdsStatusReferences(gk schema.GroupKind) bool {
	if original, ok := namespaces.IsShadowGroup(gk.Group); ok {
		gk.Group = original
	}
	for _, s := range statusReferences {
		if s.Referrer.Group == gk.Group && (s.Referrer.Kind == "" || s.Referrer.Kind == gk.Kind) {
			return true
		}
	}
	return false
}

// statusLists returns the lists of statusReferences that obj, of kind gk, holds, by their
// JSON pointers.
func statusLists(obj *yaml.RNode, gk schema.GroupKind) map[string]*yaml.RNode {
	var out map[string]*yaml.RNode
	for _, s := range statusReferences {
		if s.Referrer.Group != gk.Group || (s.Referrer.Kind != "" && s.Referrer.Kind != gk.Kind) {
			continue
		}
		walkPath(obj.YNode(), s.Path, nil, func(path []string, n *yaml.Node) {
			if n.Kind != yaml.SequenceNode {
				return
			}
			if out == nil {
				out = map[string]*yaml.RNode{}
			}
			out[yamlnode.Pointer(path)] = yaml.NewRNode(n)
		})
	}
	return out
}

// walkPath calls f with every node at path below n ("*" is every element of a list), and
// the path to it, with indexes for "*", after at.
func walkPath(n *yaml.Node, path, at []string, f func(path []string, n *yaml.Node)) {
	n = yamlnode.RefDeref(n)
	if n == nil {
		return
	}
	if len(path) == 0 {
		f(at, n)
		return
	}
	if path[0] == "*" {
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, el := range n.Content {
			walkPath(el, path[1:], append(slices.Clone(at), strconv.Itoa(i)), f)
		}
		return
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	walkPath(yamlnode.RefLookup(n, path[0]), path[1:], append(slices.Clone(at), path[0]), f)
}

// statusEntry is one entry of a status list.
type statusEntry struct {
	index int // in the list
	node  *yaml.Node
	id    contract.Identity
}

// statusEntries lists the entries of l that name an object.
func statusEntries(l *yaml.RNode) []statusEntry {
	var out []statusEntry
	for i, n := range l.YNode().Content {
		n = yamlnode.RefDeref(n)
		if n == nil || n.Kind != yaml.MappingNode {
			continue
		}
		get := func(k string) string {
			if v := yamlnode.RefScalar(yamlnode.RefLookup(n, k)); v != nil {
				return v.Value
			}
			return ""
		}
		id := contract.Identity{Group: get("group"), Resource: get("resource"), Namespace: get("namespace"), Name: get("name")}
		if id.Resource == "" || id.Name == "" {
			continue
		}
		out = append(out, statusEntry{index: i, node: n, id: id})
	}
	return out
}

// setStatusEntry writes id into the entry n: group, resource and name always (they are
// required), and namespace when id has one (it is removed when id has none).
func setStatusEntry(n *yaml.Node, id contract.Identity) error {
	rn := yaml.NewRNode(n)
	for _, kv := range [][2]string{{"group", id.Group}, {"resource", id.Resource}, {"name", id.Name}} {
		if err := rn.PipeE(yaml.SetField(kv[0], yaml.NewStringRNode(kv[1]))); err != nil {
			return err
		}
	}
	if id.Namespace != "" {
		return rn.PipeE(yaml.SetField("namespace", yaml.NewStringRNode(id.Namespace)))
	}
	_, err := rn.Pipe(yaml.Clear("namespace"))
	return err
}

// rewriteStatusReferences rewrites, with r, the entries of obj's statusReferences that name
// an object the topology places, on the referrer's cluster, under another identity: an
// object of the plan, or one the operator declares in a class placed there. A Namespace
// stays as it is: the simulated namespace keeps its standalone name in what the operator
// reports. Entries naming objects of other clusters are left as they are. obj is in
// standalone form; each change is passed to record.
func (e Engine) rewriteStatusReferences(obj *yaml.RNode, r *renamer, record func([]plans.Change)) error {
	gv, _ := schema.ParseGroupVersion(obj.GetApiVersion())
	lists := statusLists(obj, schema.GroupKind{Group: gv.Group, Kind: obj.GetKind()})
	for _, path := range slices.Sorted(maps.Keys(lists)) {
		for _, s := range statusEntries(lists[path]) {
			i := s.index
			if s.id.IsNamespace() {
				continue
			}
			target, ok := r.statusTarget(s.id)
			if !ok || (target.Group == s.id.Group && target.Resource == s.id.Resource && target.Namespace == s.id.Namespace && target.Name == s.id.Name) {
				continue
			}
			if err := setStatusEntry(s.node, target); err != nil {
				return fmt.Errorf("%s/%d: %w", path, i, err)
			}
			// One change per field, as diffNodes records the reference table's.
			var changes []plans.Change
			for _, f := range [][3]string{{"group", s.id.Group, target.Group}, {"name", s.id.Name, target.Name}, {"namespace", s.id.Namespace, target.Namespace}, {"resource", s.id.Resource, target.Resource}} {
				if f[1] == f[2] {
					continue
				}
				c := plans.Change{Path: path + "/" + strconv.Itoa(i) + "/" + f[0], By: ByStatusReferences, Kind: plans.ChangeReference}
				if f[1] != "" || f[0] != "namespace" {
					c.From = f[1]
				}
				if f[2] != "" || f[0] != "namespace" {
					c.To = f[2]
				}
				changes = append(changes, c)
			}
			record(changes)
		}
	}
	return nil
}

// statusTarget returns where the object a status entry names lands, when it lands on the
// referrer's cluster: as the plan places it, else as the routing table would place it in a
// class the operator declares it in (without declarations: any namespaced object of a
// namespace the plan simulates).
func (r *renamer) statusTarget(id contract.Identity) (contract.Identity, bool) {
	if p, ok := r.index[keyOf("", id)]; ok {
		return p.target, p.cluster == r.from
	}
	if r.from != routing.ClusterManagement {
		return contract.Identity{}, false
	}
	e := r.engine
	if e.Declared == nil && e.Supplement == nil {
		if id.Namespace == "" || !r.simulatesNamespace(id.Namespace) {
			return contract.Identity{}, false
		}
	} else if !e.declaredOn(r.from, id) {
		return contract.Identity{}, false
	}
	target, err := e.Names.ToTarget(r.from, id)
	if err != nil {
		r.warn(fmt.Sprintf("status names %s, which cannot be mapped: %v", id, err))
		return contract.Identity{}, false
	}
	return target, true
}

// declaredOn says whether the operator declares id (Declared or Supplement) in a class the
// routing table places on cluster.
func (e Engine) declaredOn(cluster string, id contract.Identity) bool {
	for _, c := range []contract.Class{contract.ClassConfiguration, contract.ClassManagement, contract.ClassUserWorkload} {
		if !(e.Declared != nil && e.Declared.ForClass(c).Matches(id)) && !(e.Supplement != nil && e.Supplement.ForClass(c).Matches(id)) {
			continue
		}
		if d := e.Router.Route(routing.Object{Class: c, Identity: id}); d.Disposition == routing.Apply && d.Cluster == cluster {
			return true
		}
	}
	return false
}

// statusReferences maps back the entries rewriteStatusReferences rewrote, in obj found on
// the target: entries in the namespace ns of obj, or of a shadow group.
func (r *inverseRenamer) statusReferences(obj *yaml.RNode, ns string) error {
	gv, _ := schema.ParseGroupVersion(obj.GetApiVersion())
	gk := schema.GroupKind{Group: gv.Group, Kind: obj.GetKind()}
	if original, ok := namespaces.IsShadowGroup(gk.Group); ok {
		gk.Group = original
	}
	lists := statusLists(obj, gk)
	for _, path := range slices.Sorted(maps.Keys(lists)) {
		for _, s := range statusEntries(lists[path]) {
			i := s.index
			if s.id.Namespace == "" || s.id.Namespace != ns || s.id.IsNamespace() {
				continue
			}
			src, err := r.inv.Names.ToSource(r.cluster, s.id, nil)
			if err != nil {
				r.warn(fmt.Sprintf("%s/%d: %s cannot be mapped back: %v", path, i, s.id, err))
				continue
			}
			if err := setStatusEntry(s.node, src); err != nil {
				return fmt.Errorf("%s/%d: %w", path, i, err)
			}
		}
	}
	return nil
}
