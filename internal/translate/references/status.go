package references

import (
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/namespaces"
)

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

// statuses are the status lists the engine follows like fields of the reference
// table, in status writes (UpdateStatus, ApplyStatus, PatchStatus) and in whole objects:
// a ClusterOperator's relatedObjects (what must-gather and the console follow), an
// operator CR's generations (library-go's workload and static-pod controllers compare the
// generation of the Deployments and DaemonSets they name), and the relatedObjects of the
// cluster Ingress's componentRoutes (CAO's custom-route controller names its Route there).
// The componentRoutes' own namespace and name are not references: they match an entry of
// spec.componentRoutes, which the cluster's administrator wrote.
var statuses = []StatusReference{
	{Referrer: schema.GroupKind{Group: "config.openshift.io", Kind: "ClusterOperator"}, Path: []string{"status", "relatedObjects"}},
	{Referrer: schema.GroupKind{Group: "operator.openshift.io"}, Path: []string{"status", "generations"}},
	{Referrer: schema.GroupKind{Group: "config.openshift.io", Kind: "Ingress"}, Path: []string{"status", "componentRoutes", "*", "relatedObjects"}},
}

// HoldsStatus says whether objects of kind gk (a shadow group's, or its
// original's) have statuses.
func HoldsStatus(gk schema.GroupKind) bool {
	if original, ok := namespaces.IsShadowGroup(gk.Group); ok {
		gk.Group = original
	}
	for _, s := range statuses {
		if s.Referrer.Group == gk.Group && (s.Referrer.Kind == "" || s.Referrer.Kind == gk.Kind) {
			return true
		}
	}
	return false
}

// StatusLists returns the lists of statuses that obj, of kind gk, holds, by their
// JSON pointers.
func StatusLists(obj *yaml.RNode, gk schema.GroupKind) map[string]*yaml.RNode {
	var out map[string]*yaml.RNode
	for _, s := range statuses {
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

// StatusEntry is one entry of a status list.
type StatusEntry struct {
	// Index is the entry's place in the list.
	Index int
	// Node is the entry.
	Node *yaml.Node
	// ID is the object it names.
	ID contract.Identity
}

// StatusEntries lists the entries of l that name an object.
func StatusEntries(l *yaml.RNode) []StatusEntry {
	var out []StatusEntry
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
		out = append(out, StatusEntry{Index: i, Node: n, ID: id})
	}
	return out
}

// SetStatusEntry writes id into the entry n: group, resource and name always (they are
// required), and namespace when id has one (it is removed when id has none).
func SetStatusEntry(n *yaml.Node, id contract.Identity) error {
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
