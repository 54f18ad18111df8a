package plans

import (
	"slices"
	"strconv"

	"github.com/topolayer/topolayer/internal/yamlnode"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Change is one change the engine made to an object's body on its way to the target: where,
// from what to what, and which step made it. The engine records them as it works; the parity
// report attributes differences with them.
type Change struct {
	// Path is the changed field as a JSON pointer (RFC 6901): "/metadata/name",
	// "/spec/template/spec/volumes/0/configMap/name", "/metadata/annotations/a~1b".
	Path string `json:"path"`
	// From and To are the JSON values before and after the change; nil when the field is
	// absent (or null) on that side.
	From any `json:"from,omitempty"`
	To   any `json:"to,omitempty"`
	// By names the step: "namespaces", "reference-table", "event-involved-object",
	// "annotate", a routing rule, or the name of a transform.
	By string `json:"by"`
	// Kind says what kind of change it is: one of the Change* constants.
	Kind string `json:"kind"`
	// Detail says more, where the step has more to say ("simulated namespace").
	Detail string `json:"detail,omitempty"`
}

// Kinds of Change.
const (
	// ChangeRenamed: the object's namespace or name became its target's (simulated namespace,
	// alias).
	ChangeRenamed = "renamed"
	// ChangeShadowed: the apiVersion became the namespaced shadow group's.
	ChangeShadowed = "shadowed"
	// ChangeConverted: the kind or group became another (a ClusterRole placed as a Role).
	ChangeConverted = "converted"
	// ChangeReference: a reference to a renamed object was rewritten.
	ChangeReference = "reference-rewritten"
	// ChangeRecorded: the standalone identity and the operator were recorded on the object.
	ChangeRecorded = "identity-recorded"
	// ChangeTransformed: a transform (a profile's, or a configured patch) changed the body.
	ChangeTransformed = "transformed"
)

// The steps of the engine that changes name in Change.By, besides rules and transforms.
const (
	ByNamespaces          = "namespaces"
	ByReferenceTable      = "reference-table"
	ByEventInvolvedObject = "event-involved-object"
	ByAnnotate            = "annotate"
)

// Diff records, as changes by and of kind, every place where after differs from before:
// the smallest subtrees that differ, where mappings recurse key by key (a mapping one side
// lacks is compared with an empty one, so that each key it brings is a change of its own; an
// empty one it brings or takes is a change itself) and
// sequences of equal length index by index. One walk of the two trees: linear in their size.
func Diff(before, after *yaml.Node, by, kind string) []Change {
	return DiffAt(nil, before, after, by, kind)
}

// DiffAt is Diff of two subtrees at path: their changes as Diff lists them for
// two objects that differ only there.
func DiffAt(path []string, before, after *yaml.Node, by, kind string) []Change {
	var out []Change
	var walk func(path []string, a, b *yaml.Node)
	walk = func(path []string, a, b *yaml.Node) {
		a, b = yamlnode.Deref(a), yamlnode.Deref(b)
		switch {
		case a == nil && b == nil:
			return
		case a != nil && b != nil && len(a.Content) > 0 && yamlnode.Identical(a, b):
			// The same tree is the same value: skip the walk of its keys (most of an object
			// is what a step left alone).
			return
		case a == nil && b.Kind == yaml.MappingNode && len(b.Content) == 0,
			b == nil && a.Kind == yaml.MappingNode && len(a.Content) == 0:
			// An empty mapping that comes or goes (emptyDir: {}) has no key to stand for it:
			// it is a change of its own.
		case a != nil && b != nil && a.Kind == yaml.MappingNode && b.Kind == yaml.MappingNode,
			a == nil && b.Kind == yaml.MappingNode, b == nil && a.Kind == yaml.MappingNode:
			walkMappings(path, a, b, walk)
			return
		case a != nil && b != nil && a.Kind == yaml.SequenceNode && b.Kind == yaml.SequenceNode && len(a.Content) == len(b.Content):
			for i := range a.Content {
				walk(append(path, strconv.Itoa(i)), a.Content[i], b.Content[i])
			}
			return
		case a != nil && b != nil && yamlnode.Equal(a, b):
			return
		}
		out = append(out, Change{Path: yamlnode.Pointer(path), From: yamlnode.Value(a), To: yamlnode.Value(b), By: by, Kind: kind})
	}
	walk(slices.Clip(slices.Clone(path)), before, after)
	return out
}

// walkMappings walks the keys of two mappings (either may be nil): a's keys in order, then the
// keys only b has. The walk appends to path: a child's path shares its parent's array, which
// holds while the walk is in the child (the walk is depth first and reads path only then).
func walkMappings(path []string, a, b *yaml.Node, walk func([]string, *yaml.Node, *yaml.Node)) {
	inA, inB := yamlnode.KeysOf(a), yamlnode.KeysOf(b)
	if a != nil {
		for i := 0; i+1 < len(a.Content); i += 2 {
			k := a.Content[i].Value
			walk(append(path, k), a.Content[i+1], inB.Value(k))
		}
	}
	if b != nil {
		for i := 0; i+1 < len(b.Content); i += 2 {
			if k := b.Content[i].Value; !inA.Has(k) {
				walk(append(path, k), nil, b.Content[i+1])
			}
		}
	}
}
