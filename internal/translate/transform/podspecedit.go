package transform

import (
	"fmt"
	"slices"

	"sigs.k8s.io/kustomize/api/filters/patchstrategicmerge"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/internal/yamlnode"
)

// podSpecEdit sets or removes top-level fields of the pod spec under a pod template path,
// with the result kustomize's strategic merge of the same patch (podSpecPatch) gives, without
// its walk of the whole object. The profile's patches only remove fields (null), replace a
// scalar or a list without merge key (tolerations), or merge into a list by name
// (imagePullSecrets); the edit does those directly.
//
// The strategic merge walks every field of the object, not just the patch's: it quotes the
// strings a YAML 1.1 parser would not read as strings, and rebuilds each list that has a merge
// key, which merges elements of equal keys and drops empty ones. The quoting of a scalar tagged
// !!str changes nothing any output reads (its tag says it is a string); everything else does.
// So the edit runs only on objects where that walk changes nothing else (smpNeutral); on any
// other object, and where the patch meets a field of another kind, it runs the strategic merge
// itself. TestPodSpecEditMatchesStrategicMerge compares the two.
type podSpecEdit struct {
	// path is the path of the pod template in the object.
	path []string
	// patch is the strategic-merge patch, parsed; spec its pod spec mapping.
	patch, spec *yaml.RNode
	// fields are the patch's pod spec fields, in the order the merge visits them (sorted).
	fields []podSpecField
}

// podSpecField is one field of a podSpecEdit's patch.
type podSpecField struct {
	name string
	// value is the patch's value, as the merge writes it where the field is new (its strings
	// quoted as FieldSetter quotes them); nil removes the field.
	value *yaml.Node
}

// NewPodSpecEdit returns the filter that sets or removes top-level fields of the pod spec
// under path, with the result of the strategic-merge patch of spec at that path, and without
// its walk of the whole object. Values are nil (remove the field), strings, or lists of
// mappings of strings: a list the schema merges (by name) is merged, any other replaced.
func NewPodSpecEdit(path []string, spec map[string]any) (kio.Filter, error) {
	return newPodSpecEdit(path, spec)
}

// newPodSpecEdit returns the edit of the pod spec under path that the strategic-merge patch
// podSpecPatch(path, spec) makes.
func newPodSpecEdit(path []string, spec map[string]any) (podSpecEdit, error) {
	patch, err := podSpecPatch(path, spec)
	if err != nil {
		return podSpecEdit{}, err
	}
	e := podSpecEdit{path: path, patch: patch}
	e.spec, err = patch.Pipe(yaml.Lookup(append(slices.Clone(path), "spec")...))
	if err != nil || e.spec == nil {
		return podSpecEdit{}, fmt.Errorf("patch %v: no pod spec", path)
	}
	fields, err := e.spec.Fields()
	if err != nil {
		return podSpecEdit{}, err
	}
	slices.Sort(fields)
	for _, name := range fields {
		v := e.spec.Field(name).Value.YNode()
		f := podSpecField{name: name}
		switch {
		case v.Tag == yaml.NodeTagNull:
		case v.Kind == yaml.ScalarNode:
			f.value = yamlnode.QuotedNew(yaml.CopyYNode(v))
		case v.Kind == yaml.SequenceNode:
			f.value = yaml.CopyYNode(v)
		default:
			return podSpecEdit{}, fmt.Errorf("patch %v: field %s: a %s", path, name, v.ShortTag())
		}
		e.fields = append(e.fields, f)
	}
	return e, nil
}

// podSpecPatch builds the strategic-merge patch that sets fields of the pod spec under path.
func podSpecPatch(path []string, spec map[string]any) (*yaml.RNode, error) {
	patch := map[string]any{"spec": spec}
	for i := len(path) - 1; i >= 0; i-- {
		patch = map[string]any{path[i]: patch}
	}
	data, err := sigsyaml.Marshal(patch)
	if err != nil {
		return nil, err
	}
	return yaml.Parse(string(data))
}

// Filter implements kio.Filter.
func (e podSpecEdit) Filter(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	for i, o := range objs {
		if e.edit(o.YNode()) {
			continue
		}
		out, err := patchstrategicmerge.Filter{Patch: e.patch.Copy()}.Filter([]*yaml.RNode{o})
		if err != nil {
			return nil, err
		}
		if len(out) != 1 {
			return nil, fmt.Errorf("strategic merge returned %d objects", len(out))
		}
		objs[i] = out[0]
	}
	return objs, nil
}

// edit makes the edit on obj and reports true when it can: obj is neutral to the strategic
// merge's walk, and every node on the patch's path is of the kind the patch expects.
// It changes nothing when it reports false.
func (e podSpecEdit) edit(obj *yaml.Node) bool {
	if !e.direct(obj) {
		return false
	}
	e.apply(obj)
	return true
}

// Scope implements Scoped: where the edit is direct, it changes the pod spec's fields
// it edits and nothing else (it may create the pod spec and its parents, empty but for them).
func (e podSpecEdit) Scope(obj *yaml.Node) ([]string, []string, func(), bool) {
	if !e.direct(obj) {
		return nil, nil, nil, false
	}
	keys := make([]string, len(e.fields))
	for i, f := range e.fields {
		keys[i] = f.name
	}
	return append(slices.Clone(e.path), "spec"), keys, func() { e.apply(obj) }, true
}

// direct reports whether the edit can be made on obj directly: obj is neutral to the strategic
// merge's walk, and every node on the patch's path is of the kind the patch expects.
func (e podSpecEdit) direct(obj *yaml.Node) bool {
	if !smpNeutral(obj) {
		return false
	}
	segments := append(slices.Clone(e.path), "spec")
	n := obj
	for _, s := range segments {
		v := yamlnode.MappingValue(n, s)
		if v == nil || v.Tag == yaml.NodeTagNull {
			n = nil
			break
		}
		if v.Kind != yaml.MappingNode {
			return false
		}
		n = v
	}
	apiVersion, kind := yamlnode.ScalarValue(yamlnode.MappingValue(obj, "apiVersion")), yamlnode.ScalarValue(yamlnode.MappingValue(obj, "kind"))
	for _, f := range e.fields {
		if f.value == nil || f.value.Kind != yaml.SequenceNode {
			continue
		}
		// A list the schema merges is merged by name; the patch's lists hold names only.
		if merges, keys := listStrategy(apiVersion, kind, append(slices.Clone(segments), f.name)); merges && !slices.Equal(keys, []string{"name"}) {
			return false
		}
	}
	if n != nil {
		for _, f := range e.fields {
			v := yamlnode.MappingValue(n, f.name)
			if f.value == nil || v == nil || v.Tag == yaml.NodeTagNull {
				continue
			}
			if v.Kind != f.value.Kind {
				return false
			}
		}
	}
	return true
}

// apply makes the edit on obj, which direct accepted.
func (e podSpecEdit) apply(obj *yaml.Node) {
	segments := append(slices.Clone(e.path), "spec")
	apiVersion, kind := yamlnode.ScalarValue(yamlnode.MappingValue(obj, "apiVersion")), yamlnode.ScalarValue(yamlnode.MappingValue(obj, "kind"))
	// The merge gives an empty mapping on the path the style of the patch's (block), and
	// adds what is missing or null as the patch's own mapping.
	n, keyTag := obj, ""
	for i, s := range segments {
		if len(n.Content) == 0 {
			n.Style = 0
		}
		v := yamlnode.MappingValue(n, s)
		if v == nil || v.Tag == yaml.NodeTagNull {
			n, keyTag = created(n, segments[i:]), yaml.NodeTagString
			break
		}
		n = v
		if i == len(segments)-1 && len(n.Content) == 0 {
			n.Style = 0
		}
	}
	for _, f := range e.fields {
		old := yamlnode.MappingValue(n, f.name)
		switch {
		case f.value == nil:
			yamlnode.RemoveField(n, f.name)
		case f.value.Kind != yaml.SequenceNode:
			yamlnode.SetField(n, f.name, yaml.CopyYNode(f.value), keyTag)
		default:
			if merges, _ := listStrategy(apiVersion, kind, append(slices.Clone(segments), f.name)); !merges {
				yamlnode.SetField(n, f.name, yaml.CopyYNode(f.value), keyTag)
				break
			}
			var elems []*yaml.Node
			if old != nil && old.Tag != yaml.NodeTagNull {
				elems = old.Content
			}
			yamlnode.SetField(n, f.name, &yaml.Node{Kind: yaml.SequenceNode, Content: mergedByName(elems, f.value.Content)}, keyTag)
		}
	}
}

// created sets the first of segments, missing or null in the mapping m, to a mapping, and
// the rest under it, as the merge adds the patch's own mappings there (their keys are the
// patch's, tagged; the pod spec's fields are set after); it returns the innermost.
func created(m *yaml.Node, segments []string) *yaml.Node {
	keyTag := ""
	for _, s := range segments {
		m, keyTag = yamlnode.SetField(m, s, &yaml.Node{Kind: yaml.MappingNode, Tag: yaml.NodeTagMap}, keyTag), yaml.NodeTagString
	}
	return m
}

// mergedByName returns the elements of a list whose merge key is name, dest, merged with the
// patch's as the strategic merge (prepending, as kustomize's patches do) merges them: the
// patch's elements first, each the element of dest of the same name with the patch's name
// node (in the old one's style) or else the patch's own, its strings quoted as new values
// are; then the other elements of dest, in order. The merge writes the list as a new,
// untagged node.
func mergedByName(dest, patch []*yaml.Node) []*yaml.Node {
	out := make([]*yaml.Node, 0, len(dest)+len(patch))
	merged := make([]bool, len(dest))
	for _, p := range patch {
		name := yamlnode.MappingValue(p, "name")
		i := slices.IndexFunc(dest, func(d *yaml.Node) bool { return yamlnode.MappingValue(d, "name").Value == name.Value })
		if i >= 0 {
			yamlnode.SetField(dest[i], "name", yaml.CopyYNode(name), "")
			out, merged[i] = append(out, dest[i]), true
			continue
		}
		elem := yaml.CopyYNode(p)
		for j := 1; j < len(elem.Content); j += 2 {
			yamlnode.QuotedNew(elem.Content[j])
		}
		out = append(out, elem)
	}
	for i, d := range dest {
		if !merged[i] {
			out = append(out, d)
		}
	}
	return out
}
