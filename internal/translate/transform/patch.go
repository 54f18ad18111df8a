package transform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"sigs.k8s.io/kustomize/api/filters/patchjson6902"
	"sigs.k8s.io/kustomize/api/filters/patchstrategicmerge"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/routing"
)

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

// HCPNamespaceVariable, in a patch's text, stands for the namespace of the hosted control
// plane the object lands in ("" standalone), so that one configuration writes the in-cluster
// host of a Service in every HostedControlPlane.
const HCPNamespaceVariable = "$(HCP_NAMESPACE)"

// Transform compiles the patch, checking that it parses. A patch whose text names
// HCPNamespaceVariable is compiled again, with the namespace, for each object's context.
func (p Patch) Transform() (Transform, error) {
	filter, err := p.compile()
	if err != nil {
		return Transform{}, err
	}
	variable := strings.Contains(p.StrategicMerge+p.JSON6902+p.Merge, HCPNamespaceVariable)
	return Transform{Name: p.Name, Cluster: p.Cluster, Match: p.Match, Filter: func(c Context) (kio.Filter, error) {
		f := filter
		if variable {
			q := p
			for _, text := range []*string{&q.StrategicMerge, &q.JSON6902, &q.Merge} {
				*text = strings.ReplaceAll(*text, HCPNamespaceVariable, c.HCPNamespace)
			}
			var err error
			if f, err = q.compile(); err != nil {
				return nil, err
			}
		}
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

// compile parses the patch into its filter.
func (p Patch) compile() (kio.Filter, error) {
	var filter kio.Filter
	set := 0
	for _, v := range []string{p.StrategicMerge, p.JSON6902, p.Merge} {
		if v != "" {
			set++
		}
	}
	if p.Document != nil && p.Document.Key == "" {
		return nil, errors.New("document.key: the data key of the document to patch")
	}
	switch {
	case set > 1:
		return nil, errors.New("set one of strategicMerge, json6902 and merge: not both, nor all three")
	case p.Merge != "":
		js, err := sigsyaml.YAMLToJSON([]byte(p.Merge))
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		if !json.Valid(js) || len(bytes.TrimSpace(js)) == 0 || bytes.TrimSpace(js)[0] != '{' {
			return nil, errors.New("merge: not a JSON or YAML mapping")
		}
		filter = mergePatch{patch: js}
	case p.StrategicMerge != "":
		node, err := yaml.Parse(p.StrategicMerge)
		if err != nil {
			return nil, fmt.Errorf("strategicMerge: %w", err)
		}
		if node.YNode().Kind != yaml.MappingNode {
			return nil, errors.New("strategicMerge: not a YAML mapping")
		}
		filter = patchstrategicmerge.Filter{Patch: node}
	case p.JSON6902 != "":
		js, _, err := decodeJSON6902(p.JSON6902)
		if err != nil {
			return nil, err
		}
		filter = patchjson6902.Filter{Patch: string(js)}
	default:
		return nil, errors.New("set strategicMerge, json6902 or merge")
	}
	return filter, nil
}

// decodeJSON6902 reads a JSON patch (RFC 6902) written in YAML or JSON: its JSON and its
// operations, each a known op with a path.
func decodeJSON6902(text string) ([]byte, jsonpatch.Patch, error) {
	js, err := sigsyaml.YAMLToJSON([]byte(text))
	if err != nil {
		return nil, nil, fmt.Errorf("json6902: %w", err)
	}
	ops, err := jsonpatch.DecodePatch(js)
	if err != nil {
		return nil, nil, fmt.Errorf("json6902: %w", err)
	}
	for i, op := range ops {
		switch op.Kind() {
		case "add", "remove", "replace", "move", "copy", "test":
		default:
			return nil, nil, fmt.Errorf("json6902[%d].op: %q is not add, remove, replace, move, copy or test", i, op.Kind())
		}
		if _, err := op.Path(); err != nil {
			return nil, nil, fmt.Errorf("json6902[%d].path: %w", i, err)
		}
	}
	return js, ops, nil
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
		_, ops, err := decodeJSON6902(p.JSON6902)
		if err != nil {
			return nil, err
		}
		for _, op := range ops {
			if op.Kind() == "test" {
				continue
			}
			path, _ := op.Path() // decodeJSON6902 checked it
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
