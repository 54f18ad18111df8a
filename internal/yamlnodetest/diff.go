package yamlnodetest

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// NodeDiff describes the first difference between two trees: kind, tag (a mapping's or a
// list's as it resolves: the merge writes lists it rebuilds untagged), value, style (but a
// !!str scalar's, which no output reads), anchor, and content in order; "" when there is none.
func NodeDiff(want, got *yaml.Node, at string) string { return treeDiff(want, got, at, false) }

// NodeDiffExact is NodeDiff with every tag and style compared.
func NodeDiffExact(want, got *yaml.Node, at string) string { return treeDiff(want, got, at, true) }

// treeDiff is NodeDiff, or NodeDiffExact when exact.
func treeDiff(want, got *yaml.Node, at string, exact bool) string {
	switch {
	case want == nil || got == nil:
		if want != got {
			return fmt.Sprintf("%s: %v, want %v", at, got, want)
		}
		return ""
	case want.Kind != got.Kind, want.Value != got.Value, len(want.Content) != len(got.Content),
		exact && (want.Tag != got.Tag || want.Style != got.Style),
		!exact && (want.ShortTag() != got.ShortTag() || want.Kind == yaml.ScalarNode && want.Tag != got.Tag || want.Anchor != got.Anchor ||
			want.Style != got.Style && !(want.Kind == yaml.ScalarNode && want.Tag == yaml.NodeTagString)):
		return fmt.Sprintf("%s: kind %v tag %q value %q style %v (%d nodes), want kind %v tag %q value %q style %v (%d nodes)",
			at, got.Kind, got.Tag, got.Value, got.Style, len(got.Content), want.Kind, want.Tag, want.Value, want.Style, len(want.Content))
	}
	for i := range want.Content {
		if d := treeDiff(want.Content[i], got.Content[i], fmt.Sprintf("%s/%d", at, i), exact); d != "" {
			return d
		}
	}
	return ""
}
