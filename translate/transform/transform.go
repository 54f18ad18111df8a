package transform

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"sigs.k8s.io/kustomize/api/filters/patchjson6902"
	"sigs.k8s.io/kustomize/api/filters/patchstrategicmerge"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/translate/internal/yamlnode"
)

// identityFields are the JSON pointers of the fields that make an object's identity and
// ownership.
var identityFields = []string{"/apiVersion", "/kind", "/metadata/name", "/metadata/namespace", "/metadata/generateName", "/metadata/ownerReferences"}

// IdentityField returns the identity field a change at pointer touches ("" for none): the
// field itself, a part of it, or a whole that holds it (the object, metadata).
func IdentityField(pointer string) string {
	for _, f := range identityFields {
		if pointer == f || under(pointer, f) || under(f, pointer) || pointer == "" {
			return f
		}
	}
	return ""
}

// under reports whether the JSON pointer p is below the pointer above (p has above+"/" as a
// prefix).
func under(p, above string) bool {
	return len(p) > len(above) && p[len(above)] == '/' && strings.HasPrefix(p, above)
}

// Dotted prints a JSON pointer as a field path: "/metadata/name" as "metadata.name".
func Dotted(pointer string) string {
	if pointer == "" {
		return "(the whole object)"
	}
	return strings.Join(yamlnode.PointerSegments(pointer), ".")
}

// IdentityFields returns the identity fields (apiVersion, kind, metadata.name,
// metadata.namespace, metadata.generateName, metadata.ownerReferences) the patch would set or
// remove, as field paths, in the order found; none for a patch of a Document. A strategic-merge
// or merge patch touches those it names,
// or all of them with a $patch directive at the top or in metadata, or a metadata that is not
// a mapping; a JSON 6902 operation those its path (and, for move, its from) is in or above.
func (p Patch) IdentityFields() ([]string, error) {
	var out []string
	add := func(pointer string) {
		if f := IdentityField(pointer); f != "" && !slices.Contains(out, Dotted(f)) {
			out = append(out, Dotted(f))
		}
	}
	switch {
	case p.Document != nil:
		// It edits a document inside a data key, not the object.
	case p.StrategicMerge != "" || p.Merge != "":
		var patch map[string]any
		if err := sigsyaml.Unmarshal([]byte(p.StrategicMerge+p.Merge), &patch); err != nil {
			return nil, fmt.Errorf("strategicMerge: %w", err)
		}
		if _, ok := patch["$patch"]; ok {
			add("")
		}
		for _, k := range []string{"apiVersion", "kind"} {
			if _, ok := patch[k]; ok {
				add("/" + k)
			}
		}
		if meta, ok := patch["metadata"]; ok {
			m, isMap := meta.(map[string]any)
			if !isMap {
				add("/metadata")
			}
			if _, ok := m["$patch"]; ok {
				add("/metadata")
			}
			for _, k := range []string{"name", "namespace", "generateName", "ownerReferences"} {
				if _, ok := m[k]; ok {
					add("/metadata/" + k)
				}
			}
		}
	case p.JSON6902 != "":
		js, err := sigsyaml.YAMLToJSON([]byte(p.JSON6902))
		if err != nil {
			return nil, fmt.Errorf("json6902: %w", err)
		}
		ops, err := jsonpatch.DecodePatch(js)
		if err != nil {
			return nil, fmt.Errorf("json6902: %w", err)
		}
		for i, op := range ops {
			if op.Kind() == "test" {
				continue
			}
			path, err := op.Path()
			if err != nil {
				return nil, fmt.Errorf("json6902[%d].path: %w", i, err)
			}
			add(path)
			if op.Kind() == "move" {
				if from, err := op.From(); err == nil {
					add(from)
				}
			}
		}
	}
	return out, nil
}

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

// smpNeutral reports whether kustomize's strategic merge, walking obj, would change nothing
// in it but the style of scalars tagged !!str (which no output reads: the tag says what they
// are). It is conservative: it says false for whatever it does not prove neutral. The walk
// (kyaml's walk.Walker with merge2.Merger, one source) visits every field of every mapping and
// the elements of the lists the OpenAPI schema gives a merge strategy, and
//   - quotes an untagged plain scalar that YAML 1.1 does not read as a string: it becomes one;
//   - drops a field whose value is null written as nothing;
//   - rebuilds a list with a merge strategy: elements of equal keys merge, empty ones go, a
//     list of scalars loses its duplicates and its elements' tags;
//   - takes a schema from comments, and from apiVersion and kind where a field has none.
func smpNeutral(obj *yaml.Node) bool {
	if obj.Kind != yaml.MappingNode {
		return false
	}
	c := neutralCheck{apiVersion: yamlnode.ScalarValue(yamlnode.MappingValue(obj, "apiVersion")), kind: yamlnode.ScalarValue(yamlnode.MappingValue(obj, "kind"))}
	return c.node(obj, true)
}

// neutralCheck is one smpNeutral walk: the object's type, and the path of the node visited
// (map keys, and "[]" for list elements), for the schema of the lists it meets.
type neutralCheck struct {
	apiVersion, kind string
	path             []string
}

func (c *neutralCheck) node(n *yaml.Node, root bool) bool {
	if n.HeadComment != "" || n.LineComment != "" || n.FootComment != "" {
		return false
	}
	switch n.Kind {
	case yaml.ScalarNode:
		switch {
		case n.Tag == yaml.NodeTagNull:
			return n.Value != ""
		case n.Tag == "" && n.Style == 0:
			return !yamlnode.NonString(n)
		}
		return true
	case yaml.MappingNode:
		if !root && yamlnode.MappingValue(n, "apiVersion") != nil && yamlnode.MappingValue(n, "kind") != nil {
			return false // the walk would look for a schema of its own type
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.HeadComment != "" || k.LineComment != "" || k.FootComment != "" {
				return false
			}
			for j := 0; j < i; j += 2 {
				if n.Content[j].Value == k.Value {
					return false
				}
			}
			c.path = append(c.path, k.Value)
			ok := c.node(n.Content[i+1], false)
			c.path = c.path[:len(c.path)-1]
			if !ok {
				return false
			}
		}
		return true
	case yaml.SequenceNode:
		merges, keys := listStrategy(c.apiVersion, c.kind, c.path)
		if !merges || len(n.Content) == 0 {
			return true // the walk does not enter a list without merge strategy
		}
		if len(keys) == 0 || !distinctKeys(n.Content, keys) {
			return false
		}
		c.path = append(c.path, "[]")
		defer func() { c.path = c.path[:len(c.path)-1] }()
		for _, e := range n.Content {
			if !c.node(e, false) {
				return false
			}
		}
		return true
	}
	return false // aliases, documents
}

// distinctKeys reports whether every element of a list is a non-empty mapping, each of the
// keys is set (not empty) in every element or in none, at least one is set, and no two
// elements have the same values for them: then the merge keeps each element where it is.
func distinctKeys(elems []*yaml.Node, keys []string) bool {
	var set []string
	for _, k := range keys {
		n := 0
		for _, e := range elems {
			if e.Kind != yaml.MappingNode || len(e.Content) == 0 {
				return false
			}
			if yamlnode.ScalarValue(yamlnode.MappingValue(e, k)) != "" {
				n++
			} else if v := yamlnode.MappingValue(e, k); v != nil && v.Kind != yaml.ScalarNode {
				return false
			}
		}
		switch n {
		case len(elems):
			set = append(set, k)
		case 0:
		default:
			return false
		}
	}
	if len(set) == 0 {
		return false
	}
	seen := make(map[string]bool, len(elems))
	for _, e := range elems {
		var b strings.Builder
		for _, k := range set {
			b.WriteString(yamlnode.ScalarValue(yamlnode.MappingValue(e, k)))
			b.WriteByte(0)
		}
		if seen[b.String()] {
			return false
		}
		seen[b.String()] = true
	}
	return true
}

// listStrategies caches listStrategy by type and path.
var listStrategies sync.Map

// listStrategy returns whether the OpenAPI schema kyaml knows gives the list at path (map keys,
// "[]" for list elements) of an object of that type a merge strategy, and its merge keys.
func listStrategy(apiVersion, kind string, path []string) (bool, []string) {
	key := apiVersion + "\x00" + kind + "\x00" + strings.Join(path, "\x00")
	if v, ok := listStrategies.Load(key); ok {
		s := v.(strategy)
		return s.merges, s.keys
	}
	var s strategy
	if apiVersion != "" && kind != "" {
		rs := openapi.SchemaForResourceType(yaml.TypeMeta{APIVersion: apiVersion, Kind: kind})
		for _, p := range path {
			if rs == nil {
				break
			}
			if p == "[]" {
				rs = rs.Elements()
			} else {
				rs = rs.Field(p)
			}
		}
		if rs != nil {
			ps, _ := rs.PatchStrategyAndKey()
			if slices.Contains(strings.Split(ps, ","), "merge") {
				s.merges = true
				_, s.keys = rs.PatchStrategyAndKeyList()
			}
		}
	}
	listStrategies.Store(key, s)
	return s.merges, s.keys
}

// strategy is a list's merge strategy (listStrategy).
type strategy struct {
	merges bool
	keys   []string
}

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
	// Applies, when set, narrows the transform further to the objects it returns true for,
	// as the stages before it left them (the profile's pod-spec edits of kinds it does not
	// name: objects in which package podspec finds a pod spec).
	Applies func(obj *yaml.RNode) bool
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
	// Merge is a JSON merge patch (RFC 7386), as YAML or JSON.
	Merge string `json:"merge,omitempty"`
	// Document aims the patch at a document held in one data key of the ConfigMap or Secret
	// it matches (a component's config file), not at the object.
	Document *Document `json:"document,omitempty"`
}

// Document names the data key of a ConfigMap (data) or Secret (stringData, or data as
// base64) whose value, a YAML or JSON document, a patch edits. The value is written back in
// the form it was read in: JSON (keys sorted) when it was JSON, YAML otherwise.
type Document struct {
	// Key is the data key.
	Key string `json:"key"`
}

// Transform compiles the patch, checking that it parses.
func (p Patch) Transform() (Transform, error) {
	var filter kio.Filter
	set := 0
	for _, v := range []string{p.StrategicMerge, p.JSON6902, p.Merge} {
		if v != "" {
			set++
		}
	}
	if p.Document != nil && p.Document.Key == "" {
		return Transform{}, errors.New("document.key: the data key of the document to patch")
	}
	switch {
	case set > 1:
		return Transform{}, errors.New("set one of strategicMerge, json6902 and merge: not both, nor all three")
	case p.Merge != "":
		js, err := sigsyaml.YAMLToJSON([]byte(p.Merge))
		if err != nil {
			return Transform{}, fmt.Errorf("merge: %w", err)
		}
		if !json.Valid(js) || len(bytes.TrimSpace(js)) == 0 || bytes.TrimSpace(js)[0] != '{' {
			return Transform{}, errors.New("merge: not a JSON or YAML mapping")
		}
		filter = mergePatch{patch: js}
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
		return Transform{}, errors.New("set strategicMerge, json6902 or merge")
	}
	return Transform{Name: p.Name, Cluster: p.Cluster, Match: p.Match, Filter: func(Context) (kio.Filter, error) {
		f := filter
		if smp, ok := f.(patchstrategicmerge.Filter); ok {
			// The merge may move the patch's nodes into the object: each object gets a copy,
			// so that no two objects (or two plans' goroutines) share them.
			f = patchstrategicmerge.Filter{Patch: smp.Patch.Copy()}
		}
		if p.Document != nil {
			return DocumentFilter{Key: p.Document.Key, Edit: f}, nil
		}
		return f, nil
	}}, nil
}

// mergePatch applies a JSON merge patch (RFC 7386) to each object.
type mergePatch struct{ patch []byte }

// Filter implements kio.Filter.
func (m mergePatch) Filter(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	return kio.FilterAll(yaml.FilterFunc(func(o *yaml.RNode) (*yaml.RNode, error) {
		js, err := o.MarshalJSON()
		if err != nil {
			return nil, err
		}
		merged, err := jsonpatch.MergePatch(js, m.patch)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		out, err := yaml.ConvertJSONToYamlNode(string(merged))
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		o.SetYNode(out.YNode())
		return o, nil
	})).Filter(objs)
}

// DocumentFilter runs Edit on the document held in data key Key of each ConfigMap or
// Secret, and writes the result back in the document's form (JSON, keys sorted, or YAML).
// An object that is neither, or lacks the key, is an error naming it.
type DocumentFilter struct {
	// Key is the data key.
	Key string
	// Edit edits the document.
	Edit kio.Filter
}

// Filter implements kio.Filter.
func (d DocumentFilter) Filter(objs []*yaml.RNode) ([]*yaml.RNode, error) {
	return kio.FilterAll(yaml.FilterFunc(func(o *yaml.RNode) (*yaml.RNode, error) {
		field, encoded, err := d.locate(o)
		if err != nil {
			return nil, err
		}
		text := field.YNode().Value
		if encoded {
			raw, err := base64.StdEncoding.DecodeString(text)
			if err != nil {
				return nil, fmt.Errorf("data[%s]: not base64: %w", d.Key, err)
			}
			text = string(raw)
		}
		doc, err := yaml.Parse(text)
		if err != nil {
			return nil, fmt.Errorf("data[%s]: not a YAML or JSON document: %w", d.Key, err)
		}
		out, err := d.Edit.Filter([]*yaml.RNode{doc})
		if err != nil || len(out) != 1 {
			return nil, fmt.Errorf("data[%s]: %w", d.Key, cmpOr(err, errors.New("the patch did not return one document")))
		}
		var written string
		if trimmed := strings.TrimSpace(text); strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "[") {
			js, err := out[0].MarshalJSON()
			if err != nil {
				return nil, fmt.Errorf("data[%s]: %w", d.Key, err)
			}
			written = string(js)
		} else if written, err = out[0].String(); err != nil {
			return nil, fmt.Errorf("data[%s]: %w", d.Key, err)
		}
		if encoded {
			written = base64.StdEncoding.EncodeToString([]byte(written))
		}
		if written != field.YNode().Value {
			field.YNode().Value, field.YNode().Style, field.YNode().Tag = written, 0, yaml.NodeTagString
		}
		return o, nil
	})).Filter(objs)
}

// locate returns the scalar node holding the document and whether it is base64 (a
// Secret's data).
func (d DocumentFilter) locate(o *yaml.RNode) (*yaml.RNode, bool, error) {
	kind := o.GetKind()
	var places []string
	switch {
	case kind == "ConfigMap" && o.GetApiVersion() == "v1":
		places = []string{"data"}
	case kind == "Secret" && o.GetApiVersion() == "v1":
		places = []string{"stringData", "data"}
	default:
		return nil, false, fmt.Errorf("document: %s %s is not a ConfigMap or Secret", kind, o.GetName())
	}
	for _, place := range places {
		if v, err := o.Pipe(yaml.Lookup(place, d.Key)); err == nil && v != nil && v.YNode().Kind == yaml.ScalarNode {
			return v, place == "data" && kind == "Secret", nil
		}
	}
	return nil, false, fmt.Errorf("document: %s %s has no data key %q", kind, o.GetName(), d.Key)
}

// cmpOr returns err when it is not nil, else alt.
func cmpOr(err, alt error) error {
	if err != nil {
		return err
	}
	return alt
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

// AddLabels sets labels on an object and on its pod template.
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
