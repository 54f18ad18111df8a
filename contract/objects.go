package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/yamltag"
)

// NodeJSON writes a parsed object as JSON with the meaning kyaml's RNode.MarshalJSON gives it
// (an encode to YAML and a yaml.v3 decode into map[string]any), in time linear in the size of
// the tree: yaml.v3's decoder compares every key of a mapping with every other, so a body of a
// million keys took minutes. Scalars that are not plain strings are decoded by yaml.v3 itself,
// one node at a time, so tags (!!int, !!float, !!bool, !!null, !!timestamp, !!binary) resolve
// exactly as before; aliases are expanded, merge keys (<<) merged as yaml.v3 merges them,
// duplicate keys refused, and excessive aliasing refused with yaml.v3's bound.
func NodeJSON(n *yaml.Node) ([]byte, error) {
	if n == nil {
		return []byte("null"), nil
	}
	d := &bodyDecoder{aliases: map[*yaml.Node]bool{}}
	var v any
	var err error
	switch root := document(n); root.Kind {
	case yaml.SequenceNode:
		v, err = d.value(root)
	case yaml.MappingNode:
		m := map[string]any{}
		err = d.mapping(root, m, nil, true)
		v = m
	default:
		// kyaml decodes such a root into a map, which yaml.v3 refuses for a scalar.
		return nil, fmt.Errorf("line %d: cannot write a %s as an object", root.Line, root.ShortTag())
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// NodeObject converts a parsed object (a mapping, or a document holding one) into the values
// an unstructured object holds, with the meaning ParseObject gives it.
func NodeObject(n *yaml.Node) (map[string]any, error) {
	root := document(n)
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: a %s, not an object", root.Line, root.ShortTag())
	}
	d := &bodyDecoder{aliases: map[*yaml.Node]bool{}, unstructured: true}
	m := map[string]any{}
	if err := d.mapping(root, m, nil, true); err != nil {
		return nil, err
	}
	return m, nil
}

// ParseObject parses a body that holds one object (YAML or JSON) into the values an
// unstructured object holds: map[string]any, []any, string, int64, float64, bool and nil. It
// refuses what NodeJSON refuses (duplicate keys, keys that are not strings, excessive
// aliasing), a root that is not a mapping, and numbers JSON cannot hold (NaN, infinities). It
// reads the body once, in time linear in its size.
func ParseObject(body []byte) (map[string]any, error) {
	root, err := yaml.Parse(string(body))
	if err != nil {
		return nil, err
	}
	return NodeObject(root.YNode())
}

// document returns the content of a document node, or the node itself.
func document(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	return n
}

// Bounds on alias expansion, as yaml.v3 sets them (decode.go, allowedAliasRatio).
const (
	aliasRatioRangeLow  = 400000
	aliasRatioRangeHigh = 4000000
)

// bodyDecoder holds the state of one bodyJSON walk.
type bodyDecoder struct {
	decodeCount, aliasCount, aliasDepth int
	aliases                             map[*yaml.Node]bool // aliases being expanded, against cycles
	// unstructured converts scalars to the types of unstructured objects (ParseObject).
	unstructured bool
}

// count counts one node visited and refuses documents that expand aliases excessively.
func (d *bodyDecoder) count() error {
	d.decodeCount++
	if d.aliasDepth > 0 {
		d.aliasCount++
	}
	if d.aliasCount > 100 && d.decodeCount > 1000 && float64(d.aliasCount)/float64(d.decodeCount) > allowedAliasRatio(d.decodeCount) {
		return errors.New("document contains excessive aliasing")
	}
	return nil
}

func allowedAliasRatio(decodeCount int) float64 {
	switch {
	case decodeCount <= aliasRatioRangeLow:
		return 0.99
	case decodeCount >= aliasRatioRangeHigh:
		return 0.10
	default:
		return 0.99 - 0.89*(float64(decodeCount-aliasRatioRangeLow)/float64(aliasRatioRangeHigh-aliasRatioRangeLow))
	}
}

// expand follows an alias node, refusing an anchor that contains itself.
func (d *bodyDecoder) expand(n *yaml.Node, f func(*yaml.Node) error) error {
	if d.aliases[n] {
		return fmt.Errorf("line %d: anchor '%s' value contains itself", n.Line, n.Value)
	}
	if n.Alias == nil {
		return fmt.Errorf("line %d: unknown anchor '%s' referenced", n.Line, n.Value)
	}
	d.aliases[n] = true
	d.aliasDepth++
	err := f(n.Alias)
	d.aliasDepth--
	delete(d.aliases, n)
	return err
}

// value decodes any node into what yaml.v3 decodes it into for an interface{}.
func (d *bodyDecoder) value(n *yaml.Node) (any, error) {
	if err := d.count(); err != nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return nil, nil
		}
		return d.value(n.Content[0])
	case yaml.AliasNode:
		var v any
		err := d.expand(n, func(target *yaml.Node) error {
			var err error
			v, err = d.value(target)
			return err
		})
		return v, err
	case yaml.ScalarNode:
		v, err := scalar(n)
		if err != nil || !d.unstructured {
			return v, err
		}
		return unstructuredScalar(n, v)
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := d.value(c)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.MappingNode:
		if !isStringMap(n) {
			// yaml.v3 decodes it into a map[interface{}]interface{}, which JSON refuses.
			return nil, fmt.Errorf("line %d: mapping with keys that are not strings cannot be written as JSON", n.Line)
		}
		m := map[string]any{}
		if err := d.mapping(n, m, nil, false); err != nil {
			return nil, err
		}
		return m, nil
	}
	return nil, fmt.Errorf("line %d: cannot decode node with unknown kind %d", n.Line, n.Kind)
}

// ScalarValue decodes one scalar node into the value an unstructured object holds, as
// NodeObject decodes it (a string as it is, anything else through yaml.v3: int64, float64,
// bool, nil or a time as its RFC 3339 text).
func ScalarValue(n *yaml.Node) (any, error) {
	v, err := scalar(n)
	if err != nil {
		return nil, err
	}
	return unstructuredScalar(n, v)
}

// scalar decodes one scalar: a string as it is, an integer, boolean or null tagged so and
// written as JSON writes it directly, anything else through yaml.v3.
func scalar(n *yaml.Node) (any, error) {
	switch yamltag.Of(n) {
	case yaml.NodeTagString:
		return n.Value, nil
	case yaml.NodeTagInt:
		if i, ok := decimal(n.Value); ok {
			return i, nil
		}
	case yaml.NodeTagBool:
		if n.Value == "true" || n.Value == "false" {
			return n.Value == "true", nil
		}
	case yaml.NodeTagNull:
		if n.Value == "null" {
			return nil, nil
		}
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// unstructuredScalar converts what yaml.v3 decoded a scalar into to what a JSON decode into
// an unstructured object gives: int64 for integers (float64 beyond its range), a time as its
// RFC 3339 text, and no NaN or infinity, which JSON cannot hold.
func unstructuredScalar(n *yaml.Node, v any) (any, error) {
	switch v := v.(type) {
	case int:
		return int64(v), nil
	case uint64:
		if v > math.MaxInt64 {
			return float64(v), nil
		}
		return int64(v), nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("line %d: %s is not a number JSON can hold", n.Line, n.Value)
		}
	case time.Time:
		return v.Format(time.RFC3339Nano), nil
	}
	return v, nil
}

// decimal parses an integer written as JSON writes one (an optional minus, no leading zero),
// which yaml.v3 decodes to the same value; false for any other spelling (0x1f, 010, 1_000,
// +1), left to yaml.v3.
func decimal(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || (len(digits) > 1 && digits[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return i, err == nil
}

// isStringMap reports whether every key of a mapping is a string or a merge key.
func isStringMap(n *yaml.Node) bool {
	for i := 0; i < len(n.Content); i += 2 {
		if t := yamltag.Of(n.Content[i]); t != yaml.NodeTagString && t != nodeTagMerge {
			return false
		}
	}
	return true
}

// isMerge reports whether a key is the merge key <<.
func isMerge(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "<<" && (n.Tag == "" || n.Tag == "!" || n.ShortTag() == nodeTagMerge)
}

// smallMapping is the size up to which a mapping's keys are checked for duplicates without a
// map.
const smallMapping = 16

// mapKey is a key as yaml.v3 compares keys for duplicates: kind and text.
type mapKey struct {
	kind  yaml.Kind
	value string
}

// mapping decodes a mapping into out as yaml.v3 does: duplicate keys are an error, keys
// already merged (merged non-nil: the keys of the mapping that merges this one) are kept,
// and merge keys are applied after the mapping's own keys, which win. stringify converts
// keys that are not strings to their text (the root, decoded into map[string]any).
func (d *bodyDecoder) mapping(n *yaml.Node, out map[string]any, merged map[string]bool, stringify bool) error {
	var dups []string
	dup := func(k, first *yaml.Node) {
		dups = append(dups, fmt.Sprintf("line %d: mapping key %#v already defined at line %d", k.Line, k.Value, first.Line))
	}
	if len(n.Content) <= 2*smallMapping {
		// Most mappings of an object are small: comparing each key with those before it
		// is cheaper than a map.
	keys:
		for i := 0; i < len(n.Content); i += 2 {
			k := n.Content[i]
			for j := 0; j < i; j += 2 {
				if f := n.Content[j]; f.Kind == k.Kind && f.Value == k.Value {
					dup(k, f)
					continue keys
				}
			}
		}
	} else {
		seen := make(map[mapKey]*yaml.Node, len(n.Content)/2)
		for i := 0; i < len(n.Content); i += 2 {
			k := n.Content[i]
			mk := mapKey{k.Kind, k.Value}
			if first, ok := seen[mk]; ok {
				dup(k, first)
				continue
			}
			seen[mk] = k
		}
	}
	if len(dups) > 0 {
		return errors.New("yaml: unmarshal errors:\n  " + strings.Join(dups, "\n  "))
	}
	var mergeNode *yaml.Node
	for i := 0; i < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if isMerge(kn) {
			mergeNode = vn
			continue
		}
		if err := d.count(); err != nil {
			return err
		}
		key, err := d.key(kn, stringify)
		if err != nil {
			return err
		}
		if merged != nil {
			if merged[key] {
				continue
			}
			merged[key] = true
		}
		v, err := d.value(vn)
		if err != nil {
			return err
		}
		out[key] = v
	}
	if mergeNode == nil {
		return nil
	}
	return d.merge(n, mergeNode, out, merged, stringify)
}

// key decodes a mapping key into a string.
func (d *bodyDecoder) key(n *yaml.Node, stringify bool) (string, error) {
	if n.Kind == yaml.AliasNode {
		var s string
		err := d.expand(n, func(target *yaml.Node) error {
			var err error
			s, err = d.key(target, stringify)
			return err
		})
		return s, err
	}
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("line %d: invalid map key: a %s", n.Line, n.ShortTag())
	}
	switch tag := yamltag.Of(n); {
	case tag == yaml.NodeTagString:
		return n.Value, nil
	case tag == yaml.NodeTagNull:
		// yaml.v3 (and so kyaml) drops an entry whose key is null, the API server refuses
		// it: a field named ~ or null is written quoted.
		return "", fmt.Errorf("line %d: mapping key %q is null, not a string", n.Line, n.Value)
	case stringify:
		return n.Value, nil
	}
	return "", fmt.Errorf("line %d: mapping key %q is a %s, not a string", n.Line, n.Value, n.ShortTag())
}

// merge applies the value of a merge key: a mapping, an alias of one, or a sequence of them,
// the first to set a key winning and the merging mapping's own keys winning over all.
func (d *bodyDecoder) merge(parent, merge *yaml.Node, out map[string]any, merged map[string]bool, stringify bool) error {
	if merged == nil {
		// yaml.v3 keeps out a merged key that the merging mapping has already, comparing the
		// mapping's own keys as the values they are with the merged keys as the strings they
		// become: an own key that is not a string (0) keeps out no merged key (0, which
		// becomes "0" and replaces the own key's value).
		merged = make(map[string]bool, len(parent.Content)/2)
		for i := 0; i < len(parent.Content); i += 2 {
			k := parent.Content[i]
			if isMerge(k) {
				continue
			}
			key, err := d.key(k, stringify)
			if err != nil {
				return err
			}
			if k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			if yamltag.Of(k) == yaml.NodeTagString {
				merged[key] = true
			}
		}
	}
	one := func(m *yaml.Node) error {
		if err := d.count(); err != nil {
			return err
		}
		switch {
		// The merged mappings decode into out, a map of strings: their keys become strings.
		case m.Kind == yaml.MappingNode:
			return d.mapping(m, out, merged, true)
		case m.Kind == yaml.AliasNode && m.Alias != nil && m.Alias.Kind == yaml.MappingNode:
			return d.expand(m, func(target *yaml.Node) error { return d.mapping(target, out, merged, true) })
		}
		return fmt.Errorf("line %d: map merge requires map or sequence of maps as the value", m.Line)
	}
	if merge.Kind != yaml.SequenceNode {
		return one(merge)
	}
	for _, m := range merge.Content {
		if err := one(m); err != nil {
			return err
		}
	}
	return nil
}

// nodeTagMerge is the tag of the merge key (kyaml names the others, not this one).
const nodeTagMerge = "!!merge"
