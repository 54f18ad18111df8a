package prune

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
)

// FieldBase is the field of an input-resources document that Prune reads; errors name fields
// below it.
const FieldBase = "applyConfigurationResources"

// List is one file of a pruned input directory: the objects of one kind in one namespace (or
// cluster scope).
type List struct {
	// Path is the file's place in the directory, slash-separated:
	// cluster-scoped-resources/<group>/<resource>.yaml or namespaces/<ns>/<group>/<resource>.yaml.
	Path string
	// APIVersion and Kind are the list's: the items' apiVersion and their kind plus "List".
	APIVersion, Kind string
	// Items are the objects, unchanged, in the order Prune found them.
	Items []*unstructured.Unstructured
}

// Marshal returns the file's content as the upstream pruner writes it: apiVersion, items and
// kind, keys sorted, through sigs.k8s.io/yaml.
func (l *List) Marshal() ([]byte, error) {
	items := make([]any, len(l.Items))
	for i, it := range l.Items {
		items[i] = it.Object
	}
	data, err := yaml.Marshal(map[string]any{"apiVersion": l.APIVersion, "kind": l.Kind, "items": items})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Path, err)
	}
	return data, nil
}

// found is one object read, with the resource it was read as.
type found struct {
	gvr schema.GroupVersionResource
	obj *unstructured.Unstructured
}

// id is how the upstream pruner tells objects apart: group, resource, namespace and name.
func (f found) id() string {
	ns := f.obj.GetNamespace()
	if ns == "" {
		ns = "_cluster_scoped_resource_"
	}
	return strings.Join([]string{f.gvr.Group, f.gvr.Resource, ns, f.obj.GetName()}, "/")
}

// Prune reads what resources declares from in and returns the lists to write, sorted by path.
// Every problem is reported at once, each naming its input-resources field; on any problem
// the result is nil.
func Prune(in *contract.InputDir, resources contract.ResourceList) ([]List, error) {
	var (
		errs []error
		seen = map[string]bool{}
		kept []found
	)
	keep := func(gvr schema.GroupVersionResource, objs ...*unstructured.Unstructured) {
		for _, o := range objs {
			f := found{gvr: gvr, obj: o}
			if !seen[f.id()] {
				seen[f.id()] = true
				kept = append(kept, f)
			}
		}
	}
	get := func(field string, id contract.ExactResourceID) (*unstructured.Unstructured, bool) {
		obj, err := in.Get(id.GroupVersionResource(), id.Namespace, id.Name)
		if apierrors.IsNotFound(err) {
			return nil, false
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", field, describe(id), err))
			return nil, false
		}
		return obj, true
	}

	for i, id := range resources.ExactResources {
		field := fmt.Sprintf("%s.exactResources[%d]", FieldBase, i)
		if contract.IsNamePattern(id.Name) {
			// Every object of the namespace whose name the pattern matches.
			objs, err := list(in, contract.LabelSelectedResource{ResourceTypeIdentifier: id.ResourceTypeIdentifier, Namespace: id.Namespace})
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", field, err))
				continue
			}
			for _, o := range objs {
				if contract.MatchName(id.Name, o.GetName()) {
					keep(id.GroupVersionResource(), o)
				}
			}
			continue
		}
		if obj, ok := get(field, id); ok {
			keep(id.GroupVersionResource(), obj)
		}
	}
	for i, ls := range resources.LabelSelectedResources {
		field := fmt.Sprintf("%s.labelSelectedResources[%d]", FieldBase, i)
		objs, err := list(in, ls)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", field, err))
			continue
		}
		keep(ls.GroupVersionResource(), objs...)
	}
	for i, ref := range resources.ResourceReferences {
		field := fmt.Sprintf("%s.resourceReferences[%d]", FieldBase, i)
		referring, ok := get(field+".referringResource", ref.ReferringResource)
		if !ok {
			continue
		}
		keep(ref.ReferringResource.GroupVersionResource(), referring)
		target := ref.ImplicitNamespacedReference
		if ref.Type != contract.ImplicitNamespacedReference || target == nil {
			continue // upstream follows implicit references only
		}
		names, err := contract.EvaluateNames(target.NameJSONPath, referring.Object)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.implicitNamespacedReference.nameJSONPath: %w", field, err))
			continue
		}
		for _, name := range names {
			id := contract.ExactResourceID{ResourceTypeIdentifier: target.ResourceTypeIdentifier, Namespace: target.Namespace, Name: name}
			if obj, ok := get(field+".implicitNamespacedReference", id); ok {
				keep(id.GroupVersionResource(), obj)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return group(kept)
}

// describe names an object of input-resources: resource.version.group/name[namespace].
func describe(id contract.ExactResourceID) string {
	s := id.Resource + "." + id.Version
	if id.Group != "" {
		s += "." + id.Group
	}
	s += "/" + id.Name
	if id.Namespace != "" {
		s += " in namespace " + id.Namespace
	}
	return s
}

// list answers a LIST with a label selector as the contract's fake API server does, keeping
// the directory's order: the resource must be in discovery; when any of its list files exist
// only list files are read, else its per-object files; cluster scope first, then namespaces
// by name, items in file order.
func list(in *contract.InputDir, ls contract.LabelSelectedResource) ([]*unstructured.Unstructured, error) {
	gvr := ls.GroupVersionResource()
	selector, err := metav1.LabelSelectorAsSelector(&ls.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("labelSelector: %w", err)
	}
	if gvr.Group == "" && gvr.Resource == "namespaces" {
		return in.List(gvr, ls.Namespace, selector), nil
	}
	if _, ok := in.Discovery.KindFor(gvr); !ok {
		return nil, fmt.Errorf("%s is not in the must-gather's discovery: its list kind is unknown", gvr)
	}
	var fromLists, perObject []*contract.InputObject
	for _, o := range in.Objects() {
		if o.Group != gvr.Group || o.Resource != gvr.Resource || (ls.Namespace != "" && o.Namespace != ls.Namespace) {
			continue
		}
		if o.InList {
			fromLists = append(fromLists, o)
		} else {
			perObject = append(perObject, o)
		}
	}
	source := perObject
	if len(fromLists) > 0 {
		source = fromLists
	}
	var out []*unstructured.Unstructured
	for _, o := range source {
		if selector.Matches(labels.Set(o.Object.GetLabels())) {
			out = append(out, o.Object.DeepCopy())
		}
	}
	return out, nil
}

// group sorts the objects into one list per kind and namespace. The file of a kind is named
// for the resource it was last read as, as upstream names it.
func group(objs []found) ([]List, error) {
	type key struct {
		gk        schema.GroupKind
		namespace string
	}
	var (
		order    []key
		lists    = map[key]*List{}
		versions = map[schema.GroupKind]map[string]bool{}
		resource = map[schema.GroupKind]string{}
	)
	for _, f := range objs {
		gvk := f.obj.GroupVersionKind()
		gk := gvk.GroupKind()
		if versions[gk] == nil {
			versions[gk] = map[string]bool{}
		}
		versions[gk][gvk.Version] = true
		resource[gk] = f.gvr.Resource
		k := key{gk, f.obj.GetNamespace()}
		l, ok := lists[k]
		if !ok {
			l = &List{APIVersion: f.obj.GetAPIVersion(), Kind: gvk.Kind + "List"}
			lists[k] = l
			order = append(order, k)
		}
		l.Items = append(l.Items, f.obj)
	}
	var errs []error
	for _, gk := range slices.SortedFunc(maps.Keys(versions), func(a, b schema.GroupKind) int { return strings.Compare(a.String(), b.String()) }) {
		if len(versions[gk]) > 1 {
			errs = append(errs, fmt.Errorf("%s found in versions %s: one list file cannot hold both", gk, strings.Join(slices.Sorted(maps.Keys(versions[gk])), ", ")))
		}
	}
	byPath := map[string]key{}
	out := make([]List, 0, len(order))
	for _, k := range order {
		l := lists[k]
		scope := "cluster-scoped-resources"
		if k.namespace != "" {
			scope = path.Join("namespaces", k.namespace)
		}
		l.Path = path.Join(scope, contract.GroupDir(k.gk.Group), resource[k.gk]+".yaml")
		if other, ok := byPath[l.Path]; ok {
			errs = append(errs, fmt.Errorf("%s: would hold both %s and %s", l.Path, other.gk, k.gk))
			continue
		}
		byPath[l.Path] = k
		out = append(out, *l)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b List) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}
