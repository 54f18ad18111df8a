package podspec

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Bounds of the structural search: an object nested deeper, or holding more values, is
// refused (ErrTooComplex). A body the API server stores (1.5 MiB by default) holds fewer
// values than MaxValues; no schema of a real kind nests MaxDepth levels.
const (
	MaxDepth  = 100
	MaxValues = 1 << 20
)

// ErrTooComplex says an object is beyond the search's bounds: its pod specs are unknown.
var ErrTooComplex = errors.New("too deep or too large to search for pod specs")

// Step is one step of a Path: a mapping's key, or a list's index when IsIndex.
type Step struct {
	Key     string
	Index   int
	IsIndex bool
}

// Path is where a value is in an object.
type Path []Step

// Keys returns a path of mapping keys only.
func Keys(keys ...string) Path {
	p := make(Path, len(keys))
	for i, k := range keys {
		p[i] = Step{Key: k}
	}
	return p
}

// Child returns the path of key under p (a new slice).
func (p Path) Child(key string) Path {
	return append(p[:len(p):len(p)], Step{Key: key})
}

// String prints the path as the API server's errors do: spec.template.spec.containers[0].
func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		switch {
		case s.IsIndex:
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
		case i > 0:
			b.WriteString("." + s.Key)
		default:
			b.WriteString(s.Key)
		}
	}
	return b.String()
}

// AsKeys returns the path as mapping keys, and false if it has a list index.
func (p Path) AsKeys() ([]string, bool) {
	out := make([]string, len(p))
	for i, s := range p {
		if s.IsIndex {
			return nil, false
		}
		out[i] = s.Key
	}
	return out, true
}

// Get returns the value at p in an unstructured object; nil where the path leads nowhere.
func (p Path) Get(obj map[string]any) any {
	var v any = obj
	for _, s := range p {
		switch c := v.(type) {
		case map[string]any:
			if s.IsIndex {
				return nil
			}
			v = c[s.Key]
		case []any:
			if !s.IsIndex || s.Index < 0 || s.Index >= len(c) {
				return nil
			}
			v = c[s.Index]
		default:
			return nil
		}
	}
	return v
}

// Node returns the node at p in a YAML tree (aliases followed); nil where the path leads
// nowhere.
func (p Path) Node(n *yaml.Node) *yaml.Node {
	n = deref(n)
	for _, s := range p {
		switch {
		case n == nil:
			return nil
		case n.Kind == yaml.MappingNode && !s.IsIndex:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == s.Key {
					next = n.Content[i+1]
					break
				}
			}
			n = deref(next)
		case n.Kind == yaml.SequenceNode && s.IsIndex && s.Index >= 0 && s.Index < len(n.Content):
			n = deref(n.Content[s.Index])
		default:
			return nil
		}
	}
	return n
}

// Site is one pod spec of an object.
type Site struct {
	// Spec is where the pod spec is: spec (a Pod), template.spec (a PodTemplate),
	// spec.template.spec (a workload), or wherever a custom resource holds it.
	Spec Path
	// Template is where the pod template holding the spec is, whose metadata labels and
	// annotates the pods: the object itself (an empty path) for a Pod. Valid when
	// HasTemplate; a pod spec found at a key other than "spec" has none.
	Template    Path
	HasTemplate bool
	// Known says the kind is a built-in pod-bearing one, the site its schema's: present in
	// every object of the kind, whether or not this one sets it.
	Known bool
}

// Metadata returns where the template's metadata is, and false when the site has no template.
func (s Site) Metadata() (Path, bool) {
	if !s.HasTemplate {
		return nil, false
	}
	return s.Template.Child("metadata"), true
}

// known are the template paths of the built-in pod-bearing kinds; a Pod is its own template.
var known = map[schema.GroupKind][]string{
	{Kind: "Pod"}:                        {},
	{Kind: "PodTemplate"}:                {"template"},
	{Kind: "ReplicationController"}:      {"spec", "template"},
	{Group: "apps", Kind: "Deployment"}:  {"spec", "template"},
	{Group: "apps", Kind: "ReplicaSet"}:  {"spec", "template"},
	{Group: "apps", Kind: "StatefulSet"}: {"spec", "template"},
	{Group: "apps", Kind: "DaemonSet"}:   {"spec", "template"},
	{Group: "batch", Kind: "Job"}:        {"spec", "template"},
	{Group: "batch", Kind: "CronJob"}:    {"spec", "jobTemplate", "spec", "template"},
}

// Known returns the pod spec of a built-in pod-bearing kind, false for any other kind.
func Known(gk schema.GroupKind) (Site, bool) {
	t, ok := known[gk]
	if !ok {
		return Site{}, false
	}
	tp := Keys(t...)
	return Site{Spec: tp.Child("spec"), Template: tp, HasTemplate: true, Known: true}, true
}

// KnownKinds lists the built-in pod-bearing kinds.
func KnownKinds() []schema.GroupKind {
	out := make([]schema.GroupKind, 0, len(known))
	for gk := range known {
		out = append(out, gk)
	}
	return out
}

// builtinGroups are Kubernetes' own API groups: their kinds' schemas are the API server's,
// and none but those of known holds a pod spec. A custom resource cannot be of these groups
// (a CRD of a *.k8s.io group is of another, such as gateway.networking.k8s.io).
var builtinGroups = map[string]bool{
	"": true, "apps": true, "batch": true, "autoscaling": true, "policy": true,
	"admissionregistration.k8s.io": true, "apiextensions.k8s.io": true, "apiregistration.k8s.io": true,
	"authentication.k8s.io": true, "authorization.k8s.io": true, "certificates.k8s.io": true,
	"coordination.k8s.io": true, "discovery.k8s.io": true, "events.k8s.io": true,
	"flowcontrol.apiserver.k8s.io": true, "internal.apiserver.k8s.io": true, "networking.k8s.io": true,
	"node.k8s.io": true, "rbac.authorization.k8s.io": true, "resource.k8s.io": true,
	"scheduling.k8s.io": true, "storage.k8s.io": true, "storagemigration.k8s.io": true,
}

// Schemaless reports whether the finder searches objects of gk by shape: a kind of no
// built-in API group (a custom resource), whose schema the finder does not hold.
func Schemaless(gk schema.GroupKind) bool {
	return !builtinGroups[gk.Group]
}

// MayHold reports whether objects of gk may hold a pod spec: a built-in pod-bearing kind,
// or one the finder searches by shape.
func MayHold(gk schema.GroupKind) bool {
	_, ok := known[gk]
	return ok || Schemaless(gk)
}

// Find returns the pod specs of obj, an unstructured object of kind gk, in the order of a
// walk that visits a mapping's keys sorted (FindNode: in the document's order). It returns ErrTooComplex (wrapped, with where)
// for an object beyond the search's bounds.
func Find(gk schema.GroupKind, obj map[string]any) ([]Site, error) {
	return find(gk, func(w *walker) error { return w.walk(obj, nil) })
}

// FindNode is Find on a YAML tree.
func FindNode(gk schema.GroupKind, obj *yaml.Node) ([]Site, error) {
	return find(gk, func(w *walker) error { return w.walkNode(obj, nil) })
}

// find returns the one site of a known pod-bearing kind, none for another built-in kind, and
// for a custom resource what walk finds in the object.
func find(gk schema.GroupKind, walk func(*walker) error) ([]Site, error) {
	if s, ok := Known(gk); ok {
		return []Site{s}, nil
	}
	if !Schemaless(gk) {
		return nil, nil
	}
	w := &walker{}
	if err := walk(w); err != nil {
		return nil, err
	}
	return w.found, nil
}

// containerLists are a pod spec's lists of containers.
var containerLists = []string{"containers", "initContainers", "ephemeralContainers"}

// walker searches one object; values counts what it visited.
type walker struct {
	values int
	found  []Site
}

// step counts a value at path and refuses one beyond the bounds.
func (w *walker) step(path Path) error {
	w.values++
	where := path
	if len(where) > 8 {
		where = where[:8] // the path names where; the rest of a deep one names nothing more
	}
	switch {
	case len(path) > MaxDepth:
		return fmt.Errorf("%s...: nested over %d levels: %w", where, MaxDepth, ErrTooComplex)
	case w.values > MaxValues:
		return fmt.Errorf("%s: over %d values: %w", where, MaxValues, ErrTooComplex)
	}
	return nil
}

// add records a pod spec found at path.
func (w *walker) add(path Path) {
	s := Site{Spec: append(Path(nil), path...)}
	if n := len(path); n > 0 && !path[n-1].IsIndex && path[n-1].Key == "spec" {
		s.Template, s.HasTemplate = s.Spec[:n-1:n-1], true
	}
	w.found = append(w.found, s)
}

func (w *walker) walk(v any, path Path) error {
	if err := w.step(path); err != nil {
		return err
	}
	switch c := v.(type) {
	case map[string]any:
		if isPodSpec(c) {
			w.add(path)
		}
		for _, k := range slices.Sorted(maps.Keys(c)) {
			if err := w.walk(c[k], append(path, Step{Key: k})); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range c {
			if err := w.walk(e, append(path, Step{Index: i, IsIndex: true})); err != nil {
				return err
			}
		}
	}
	return nil
}

// isPodSpec reports whether m has the shape of a PodSpec: a containers list (or init or
// ephemeral containers) of mappings that each have a name, one at least with an image.
func isPodSpec(m map[string]any) bool {
	image := false
	for _, list := range containerLists {
		l, ok := m[list].([]any)
		if !ok {
			continue
		}
		for _, e := range l {
			c, ok := e.(map[string]any)
			if !ok {
				return false
			}
			if _, ok := c["name"]; !ok {
				return false
			}
			_, hasImage := c["image"]
			image = image || hasImage
		}
	}
	return image
}

func (w *walker) walkNode(n *yaml.Node, path Path) error {
	if err := w.step(path); err != nil {
		return err
	}
	n = deref(n)
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			if err := w.walkNode(c, path); err != nil {
				return err
			}
		}
	case yaml.MappingNode:
		if isPodSpecNode(n) {
			w.add(path)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := w.walkNode(n.Content[i+1], append(path, Step{Key: n.Content[i].Value})); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for i, e := range n.Content {
			if err := w.walkNode(e, append(path, Step{Index: i, IsIndex: true})); err != nil {
				return err
			}
		}
	}
	return nil
}

// isPodSpecNode is isPodSpec on a mapping node.
func isPodSpecNode(m *yaml.Node) bool {
	image := false
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i].Value
		if k != containerLists[0] && k != containerLists[1] && k != containerLists[2] {
			continue
		}
		l := deref(m.Content[i+1])
		if l == nil || l.Kind != yaml.SequenceNode {
			continue
		}
		for _, e := range l.Content {
			if e = deref(e); e == nil || e.Kind != yaml.MappingNode {
				return false
			}
			name, img := false, false
			for j := 0; j+1 < len(e.Content); j += 2 {
				name = name || e.Content[j].Value == "name"
				img = img || e.Content[j].Value == "image"
			}
			if !name {
				return false
			}
			image = image || img
		}
	}
	return image
}

// deref follows an alias.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < MaxDepth; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}
