package transform

import (
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/openapi"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/yamlnode"
)

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
	s, ok := tableStrategy(apiVersion, kind, path)
	if !ok && apiVersion != "" && kind != "" {
		s = schemaStrategy(apiVersion, kind, path)
	}
	listStrategies.Store(key, s)
	return s.merges, s.keys
}

// schemaStrategy is listStrategy's answer from kyaml's schema itself, which it parses whole on
// the first call.
func schemaStrategy(apiVersion, kind string, path []string) strategy {
	var s strategy
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
		s = resourceStrategy(rs)
	}
	return s
}

// resourceStrategy is the merge strategy of one node of kyaml's schema.
func resourceStrategy(rs *openapi.ResourceSchema) strategy {
	var s strategy
	ps, _ := rs.PatchStrategyAndKey()
	if slices.Contains(strings.Split(ps, ","), "merge") {
		s.merges = true
		_, s.keys = rs.PatchStrategyAndKeyList()
	}
	return s
}

// strategy is a list's merge strategy (listStrategy).
type strategy struct {
	merges bool
	keys   []string
}
