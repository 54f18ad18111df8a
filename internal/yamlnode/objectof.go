package yamlnode

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/yamltag"
)

// ObjectOf returns the unstructured form of obj, the final tree of an object the engine built
// from src (the operator's object, through treeOf) and rewrote, with the meaning
// contract.NodeObject gives it. Every subtree the engine left as it was is src's own value,
// shared, not decoded again: the conversion allocates only along the paths the engine changed
// (applying copies the object before it changes it). A tree that holds what the walk does not
// decode itself (aliases, merge keys, keys that are not strings, a mapping written twice) is
// decoded whole by contract.NodeObject, which says what is wrong with it.
func ObjectOf(obj *yaml.Node, src map[string]any) (map[string]any, error) {
	for obj != nil && obj.Kind == yaml.DocumentNode && len(obj.Content) == 1 {
		obj = obj.Content[0]
	}
	if obj != nil && obj.Kind == yaml.MappingNode {
		if v, _, ok := shared(obj, src); ok {
			return v.(map[string]any), nil
		}
	}
	return contract.NodeObject(obj)
}

// shared returns the value of n, and whether it is old itself (same). ok is false where n
// holds something the walk leaves to contract.NodeObject.
func shared(n *yaml.Node, old any) (v any, same, ok bool) {
	if n == nil {
		return nil, false, false
	}
	switch n.Kind {
	case yaml.ScalarNode:
		if n.Tag == yaml.NodeTagString {
			if s, isString := old.(string); isString && s == n.Value {
				return old, true, true
			}
			return n.Value, false, true
		}
		v, err := contract.ScalarValue(n)
		if err != nil {
			return nil, false, false
		}
		// v is a string, int64, float64, bool or nil: comparable with anything.
		return v, v == old, true
	case yaml.SequenceNode:
		if n.Tag != "" && n.Tag != yaml.NodeTagSeq {
			return nil, false, false
		}
		os, _ := old.([]any)
		same = os != nil && len(os) == len(n.Content)
		var out []any
		if !same {
			out = make([]any, 0, len(n.Content))
		}
		for i, c := range n.Content {
			var oc any
			if i < len(os) {
				oc = os[i]
			}
			cv, csame, ok := shared(c, oc)
			if !ok {
				return nil, false, false
			}
			if same && !csame {
				same = false
				out = make([]any, i, len(n.Content))
				copy(out, os[:i])
			}
			if !same {
				out = append(out, cv)
			}
		}
		if same {
			return old, true, true
		}
		return out, false, true
	case yaml.MappingNode:
		if (n.Tag != "" && n.Tag != yaml.NodeTagMap) || len(n.Content)%2 != 0 {
			return nil, false, false
		}
		om, _ := old.(map[string]any)
		pairs := len(n.Content) / 2
		// While every value is the same, keys that increase strictly (treeOf writes them
		// sorted) are distinct, and as many as om has: the mapping is om.
		same = om != nil && len(om) == pairs
		var out map[string]any
		if !same {
			out = make(map[string]any, pairs)
		}
		for i := 0; i < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || yamltag.Of(k) != yaml.NodeTagString || k.Value == "<<" {
				return nil, false, false // a key that is not a string, or may be a merge key
			}
			oc, found := om[k.Value]
			cv, csame, ok := shared(n.Content[i+1], oc)
			if !ok {
				return nil, false, false
			}
			if same && (!found || !csame || (i > 0 && k.Value <= n.Content[i-2].Value)) {
				same = false
				out = make(map[string]any, pairs)
				for j := 0; j < i; j += 2 {
					out[n.Content[j].Value] = om[n.Content[j].Value]
				}
			}
			if !same {
				if _, dup := out[k.Value]; dup {
					return nil, false, false
				}
				out[k.Value] = cv
			}
		}
		if same {
			return old, true, true
		}
		return out, false, true
	}
	// Aliases (and documents inside a tree): contract.NodeObject expands them.
	return nil, false, false
}
